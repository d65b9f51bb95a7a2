// label.cu -- connected-component labelling (scipy.ndimage.label) by a
// parallel union-find, numbered as SciPy numbers components.
//
// Pipeline (four launches, no host round trip until the count is read):
//   init     L[i] = i for foreground pixels, -1 for background.
//   merge    every foreground pixel unites with its foreground neighbours in
//            the backward half of the structuring element (the element is
//            centrosymmetric, so the forward half adds nothing).  Unions link
//            the larger root under the smaller with atomicMin (Playne and
//            Hawick, "A new algorithm for parallel connected-component
//            labelling on GPUs", 2018), so every tree's root is the
//            component's smallest linear index: its first pixel in raster
//            order.
//   flatten  tiles of LB_TILE consecutive pixels: non-roots point straight
//            at their root; roots are ranked within the tile (a block scan)
//            and overwrite their entry with the encoded rank -(rank + 2);
//            the last tile to finish scans the per-tile root counts into
//            tile offsets and writes the component count.
//   write    label = 1 + tile offset of the root + the root's rank in its
//            tile, converted to the output type.
// Because roots are the first pixels of their components and ranks follow
// raster order, label k is the k-th component to start in raster order --
// exactly SciPy's numbering.
//
// Concurrency notes.  During merge, entries only decrease along a chain and
// a non-root never becomes a root again, so racing path-halving writes and
// atomicMin links may replace a parent by another ancestor but never lose a
// union (a failed atomicMin continues with the value it found).  Loads that
// may see other blocks' writes go through L2 (__ldcg).  During flatten a
// root's entry may already hold its encoded rank when another tile follows
// a chain to it, so "root" there means L[x] == x or L[x] <= -2.
#include "kernel_common.cuh"

#include <cub/block/block_scan.cuh>

namespace {

constexpr int LB_THREADS = 256;
constexpr int LB_ITEMS = 16;
constexpr int LB_TILE_SHIFT = 12;
constexpr int64_t LB_TILE = (int64_t)1 << LB_TILE_SHIFT;
static_assert(LB_THREADS * LB_ITEMS == LB_TILE, "a flatten block covers one tile");

// The backward neighbours selected by the structure, as linear offsets with
// their coordinate steps for the bounds test.
struct Neighbours {
    int count;
    int64_t offset[13];
    int8_t dz[13], dy[13], dx[13];
};

// ============================== kernels ====================================

// Foreground = any bit of the element set: exact for bool and integer masks
// (floating masks are converted to bool on the host first).
template <class S, class I>
__global__ void k_label_init(const S *mask, int64_t n, I *L, unsigned int *ticket)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *ticket = 0;
    GA_GRID_STRIDE(i, n) L[i] = mask[i] != 0 ? (I)i : (I)-1;
}

template <class I>
__device__ __forceinline__ I lb_find(I *L, I x)
{
    I p = __ldcg(L + x);
    while (p != x) {
        I g = __ldcg(L + p);
        if (g != p)
            L[x] = g;  // path halving: g is an ancestor of x
        x = p;
        p = g;
    }
    return x;
}

__device__ __forceinline__ int32_t lb_atomic_min(int32_t *p, int32_t v) { return atomicMin(p, v); }
__device__ __forceinline__ int64_t lb_atomic_min(int64_t *p, int64_t v)
{
    return (int64_t)atomicMin((long long *)p, (long long)v);
}

template <class I>
__device__ __forceinline__ void lb_unite(I *L, I a, I b)
{
    for (;;) {
        a = lb_find(L, a);
        b = lb_find(L, b);
        if (a == b)
            return;
        if (a < b) {
            I t = a;
            a = b;
            b = t;
        }
        I old = lb_atomic_min(L + a, b);
        if (old == a)
            return;
        a = old;
    }
}

template <class I>
__global__ void k_label_merge(I *L, int64_t n, int64_t ny, int64_t nx, int64_t nz,
                              Neighbours nb)
{
    GA_GRID_STRIDE(i, n) {
        if (__ldcg(L + i) < 0)
            continue;
        const I ii = (I)i;
        const I x = ii % (I)nx;
        const I row = ii / (I)nx;
        const I y = row % (I)ny;
        const I z = row / (I)ny;
        for (int k = 0; k < nb.count; ++k) {
            const I zz = z + nb.dz[k], yy = y + nb.dy[k], xx = x + nb.dx[k];
            if (zz < 0 || yy < 0 || xx < 0 || zz >= (I)nz || yy >= (I)ny || xx >= (I)nx)
                continue;
            const I j = (I)(i + nb.offset[k]);
            if (__ldcg(L + j) >= 0)
                lb_unite(L, ii, j);
        }
    }
}

// Root of a chain whose links are final: stops at L[x] == x, or at an entry
// another tile has already replaced by its encoded rank (<= -2).
template <class I>
__device__ __forceinline__ I lb_root(const I *L, I x)
{
    for (;;) {
        I p = __ldcg(L + x);
        if (p == x || p < 0)
            return x;
        x = p;
    }
}

template <class I>
__global__ void __launch_bounds__(LB_THREADS)
k_label_flatten(I *L, int64_t n, I *tile_count, I *tile_offset, unsigned int *ticket,
                int64_t *count)
{
    using TileScan = cub::BlockScan<int, LB_THREADS>;
    using GridScan = cub::BlockScan<I, LB_THREADS>;
    __shared__ union {
        typename TileScan::TempStorage tile;
        typename GridScan::TempStorage grid;
    } scan;
    __shared__ bool last;

    const int64_t base = ((int64_t)blockIdx.x << LB_TILE_SHIFT) + (int64_t)threadIdx.x * LB_ITEMS;
    I v[LB_ITEMS];
    int roots = 0;
#pragma unroll
    for (int k = 0; k < LB_ITEMS; ++k) {
        const int64_t i = base + k;
        v[k] = i < n ? L[i] : (I)-1;
        roots += v[k] == (I)i;
    }
#pragma unroll
    for (int k = 0; k < LB_ITEMS; ++k) {
        const I i = (I)(base + k);
        if (v[k] >= 0 && v[k] != i) {
            const I r = lb_root(L, v[k]);
            if (r != v[k])
                L[i] = r;
        }
    }
    int rank, total;
    TileScan(scan.tile).ExclusiveSum(roots, rank, total);
#pragma unroll
    for (int k = 0; k < LB_ITEMS; ++k) {
        const I i = (I)(base + k);
        if (v[k] == i)
            L[i] = (I)(-(rank++) - 2);
    }

    if (threadIdx.x == 0) {
        tile_count[blockIdx.x] = (I)total;
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    // The last tile: exclusive scan of the tile counts, LB_TILE at a time.
    const int64_t ntiles = gridDim.x;
    I carry = 0;
    for (int64_t start = 0; start < ntiles; start += LB_TILE) {
        const int64_t first = start + (int64_t)threadIdx.x * LB_ITEMS;
        I c[LB_ITEMS];
        I sum = 0;
#pragma unroll
        for (int k = 0; k < LB_ITEMS; ++k) {
            c[k] = first + k < ntiles ? __ldcg(tile_count + first + k) : (I)0;
            sum += c[k];
        }
        I before, chunk;
        __syncthreads();
        GridScan(scan.grid).ExclusiveSum(sum, before, chunk);
        before += carry;
#pragma unroll
        for (int k = 0; k < LB_ITEMS; ++k) {
            if (first + k < ntiles)
                tile_offset[first + k] = before;
            before += c[k];
        }
        carry += chunk;
    }
    if (threadIdx.x == 0) {
        *count = (int64_t)carry;
        *ticket = 0;
    }
}

template <class I, class O>
__global__ void k_label_write(const I *L, int64_t n, const I *tile_offset, O *out)
{
    GA_GRID_STRIDE(i, n) {
        const I v = L[i];
        I label;
        if (v == (I)-1) {
            label = 0;
        } else if (v < 0) {
            label = tile_offset[i >> LB_TILE_SHIFT] - v - 1;
        } else {
            const I w = L[v];
            label = tile_offset[(int64_t)v >> LB_TILE_SHIFT] - w - 1;
        }
        out[i] = (O)label;
    }
}

// ============================== launchers ==================================

Neighbours make_neighbours(const ga_label_args *a)
{
    Neighbours nb{};
    const int64_t plane = a->dims[1] * a->dims[2];
    for (int p = 0; p < 13; ++p) {
        if (!(a->neighbours & (1u << p)))
            continue;
        const int dz = p / 9 - 1, dy = p / 3 % 3 - 1, dx = p % 3 - 1;
        nb.dz[nb.count] = (int8_t)dz;
        nb.dy[nb.count] = (int8_t)dy;
        nb.dx[nb.count] = (int8_t)dx;
        nb.offset[nb.count] = dz * plane + dy * a->dims[2] + dx;
        nb.count++;
    }
    return nb;
}

size_t round_up(size_t n) { return (n + 255) & ~(size_t)255; }

int64_t label_size(const ga_label_args *a) { return a->dims[0] * a->dims[1] * a->dims[2]; }
int64_t label_tiles(int64_t n) { return (n + LB_TILE - 1) >> LB_TILE_SHIFT; }
bool label_wide(int64_t n) { return n >= ((int64_t)1 << 31) - 2; }

// Scratch layout: L | tile_count | tile_offset | ticket.
template <class I>
struct Scratch {
    I *L, *tile_count, *tile_offset;
    unsigned int *ticket;
    static size_t bytes(int64_t n)
    {
        const int64_t t = label_tiles(n);
        return round_up(n * sizeof(I)) + 2 * round_up(t * sizeof(I)) + 256;
    }
    Scratch(void *p, int64_t n)
    {
        char *c = (char *)p;
        const int64_t t = label_tiles(n);
        L = (I *)c;
        c += round_up(n * sizeof(I));
        tile_count = (I *)c;
        c += round_up(t * sizeof(I));
        tile_offset = (I *)c;
        c += round_up(t * sizeof(I));
        ticket = (unsigned int *)c;
    }
};

template <class I>
struct InitLaunch {
    const ga_label_args *a; I *L; unsigned int *ticket; int64_t n; cudaStream_t stream;
    template <class S> cudaError_t operator()()
    {
        k_label_init<S, I><<<ga_grid(n), GA_BLOCK, 0, stream>>>((const S *)a->mask, n, L, ticket);
        return cudaGetLastError();
    }
};

template <class I>
cudaError_t label_run(const ga_label_args *a, cudaStream_t stream)
{
    const int64_t n = label_size(a);
    Scratch<I> s(a->scratch, n);
    cudaError_t err;
    switch (a->mask_itemsize) {
    case 1: err = InitLaunch<I>{a, s.L, s.ticket, n, stream}.template operator()<uint8_t>(); break;
    case 2: err = InitLaunch<I>{a, s.L, s.ticket, n, stream}.template operator()<uint16_t>(); break;
    case 4: err = InitLaunch<I>{a, s.L, s.ticket, n, stream}.template operator()<uint32_t>(); break;
    case 8: err = InitLaunch<I>{a, s.L, s.ticket, n, stream}.template operator()<uint64_t>(); break;
    default: return cudaErrorInvalidValue;
    }
    if (err != cudaSuccess)
        return err;
    const Neighbours nb = make_neighbours(a);
    if (nb.count > 0) {
        k_label_merge<I><<<ga_grid(n), GA_BLOCK, 0, stream>>>(s.L, n, a->dims[1], a->dims[2],
                                                              a->dims[0], nb);
        if ((err = cudaGetLastError()) != cudaSuccess)
            return err;
    }
    k_label_flatten<I><<<(unsigned int)label_tiles(n), LB_THREADS, 0, stream>>>(
        s.L, n, s.tile_count, s.tile_offset, s.ticket, a->count);
    return cudaGetLastError();
}

template <class I>
struct WriteLaunch {
    const ga_label_args *a; void *out; cudaStream_t stream;
    template <class O> cudaError_t operator()()
    {
        const int64_t n = label_size(a);
        Scratch<I> s(a->scratch, n);
        k_label_write<I, O><<<ga_grid(n), GA_BLOCK, 0, stream>>>(s.L, n, s.tile_offset, (O *)out);
        return cudaGetLastError();
    }
};

template <class I>
cudaError_t label_write(const ga_label_args *a, ga_type out_type, void *out, cudaStream_t stream)
{
    WriteLaunch<I> w{a, out, stream};
    switch (out_type) {
    case GA_INT8: case GA_UINT8: return w.template operator()<uint8_t>();
    case GA_INT16: case GA_UINT16: return w.template operator()<uint16_t>();
    case GA_INT32: case GA_UINT32: return w.template operator()<uint32_t>();
    case GA_INT64: case GA_UINT64: return w.template operator()<uint64_t>();
    case GA_FLOAT32: return w.template operator()<float>();
    case GA_FLOAT64: return w.template operator()<double>();
    default: return cudaErrorInvalidValue;
    }
}

} // namespace

extern "C" size_t ga_label_scratch_bytes(int64_t n)
{
    return label_wide(n) ? Scratch<int64_t>::bytes(n) : Scratch<int32_t>::bytes(n);
}

extern "C" cudaError_t ga_launch_label(const ga_label_args *a, cudaStream_t stream)
{
    const int64_t n = label_size(a);
    if (n <= 0)
        return cudaErrorInvalidValue;
    return label_wide(n) ? label_run<int64_t>(a, stream) : label_run<int32_t>(a, stream);
}

extern "C" cudaError_t ga_launch_label_write(const ga_label_args *a, ga_type out_type, void *out,
                                             cudaStream_t stream)
{
    const int64_t n = label_size(a);
    if (n <= 0)
        return cudaErrorInvalidValue;
    return label_wide(n) ? label_write<int64_t>(a, out_type, out, stream)
                         : label_write<int32_t>(a, out_type, out, stream);
}
