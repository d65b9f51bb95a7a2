// label.cu -- connected-component labelling (scipy.ndimage.label) by a
// parallel union-find, numbered as SciPy numbers components.
//
// Pipeline (four launches, no host round trip until the count is read):
//   local    each block loads a tile of 2048 elements of one plane (e.g.
//            64 x 32) into shared memory and runs union-find there on the
//            in-tile neighbour pairs, then writes L[i] = the global index
//            of i's tile root, or -1 for background: initialisation and
//            most unions in one pass over the mask, with shared-memory
//            atomics instead of global ones.
//   border   the pairs that cross tiles (tile borders; every element when
//            the structure reaches into the previous plane) are united in
//            the global forest.  Unions link the larger root under the
//            smaller with atomicMin (Playne and Hawick, "A new algorithm
//            for parallel connected-component labelling on GPUs", 2018), in
//            shared and global memory alike, so every tree's root is the
//            component's smallest linear index: its first pixel in raster
//            order.  Only backward neighbours are visited: the structuring
//            element is centrosymmetric, so the forward half adds nothing.
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
// Concurrency notes.  During the unions, entries only decrease along a
// chain and a non-root never becomes a root again, so racing path-halving
// writes and atomicMin links may replace a parent by another ancestor but
// never lose a union (a failed atomicMin continues with the value it found).  Loads that
// may see other blocks' writes go through L2 (__ldcg).  During flatten a
// root's entry may already hold its encoded rank when another tile follows
// a chain to it, so "root" there means L[x] == x or L[x] <= -2.
#include "last_block.cuh"
#include "vec_access.cuh"

#include <cub/block/block_scan.cuh>

namespace {

constexpr int LB_THREADS = 256;
constexpr int LB_ITEMS = 16;
constexpr int LW_ITEMS = 8;  // entries a thread of k_label_write takes
// Entries a thread of k_label_write loads and stores at a time: 16 bytes of
// 8-byte outputs (so a warp's store covers 512 contiguous bytes; 32-byte
// chunks made each store half-fill twice as many sectors), else four.
template <class O> __host__ __device__ constexpr int lw_chunk() { return sizeof(O) == 8 ? 2 : 4; }
constexpr int LB_TILE_SHIFT = 12;
constexpr int64_t LB_TILE = (int64_t)1 << LB_TILE_SHIFT;
static_assert(LB_THREADS * LB_ITEMS == LB_TILE, "a flatten block covers one tile");

// Local union-find tiles: LT_SIZE elements of one plane in shared memory.
constexpr int LT_THREADS = 256;
constexpr int LT_ITEMS = 8;
constexpr int LT_SIZE = LT_THREADS * LT_ITEMS;
constexpr int LT_SHIFT = 11;
static_assert(LT_SIZE == 1 << LT_SHIFT, "tiles hold a power of two");
constexpr int LT_WIDTH = 64;  // tile width for rows at least this wide
constexpr int LB_BORDER_THREADS = 128;

// The backward neighbours selected by the structure, as linear offsets with
// their coordinate steps for the bounds test.
struct Neighbours {
    int count;
    int64_t offset[13];
    int8_t dz[13], dy[13], dx[13];
};

// ============================== kernels ====================================

// Union-find on a parent array: path halving on the way up, and unions
// that link the larger root under the smaller with atomicMin, so a tree's
// root is its smallest index.  One template for the global forest (loads
// through L2: other blocks write it) and the shared-memory one of a tile.
struct GlobalForest {
    template <class I> __device__ __forceinline__ static I load(const I *p) { return __ldcg(p); }
    template <class I> __device__ __forceinline__ static void store(I *p, I v) { *p = v; }
};
// In shared memory every access of the union phase is an atomic
// read-modify-write (loads as atomicOr(p, 0), stores as atomicExch), so the
// threads of a tile never race and compute-sanitizer's racecheck has nothing
// to report; relaxed atomic_ref loads and stores are still plain accesses to
// racecheck.  On the lesson's sky the in-tile pass takes as long as it did
// with volatile accesses (src/kernels/dev/label_bench.cu); the barrier
// before the flattening orders everything that follows.
struct SharedForest {
    __device__ __forceinline__ static int load(const int *p) { return atomicOr((int *)p, 0); }
    __device__ __forceinline__ static void store(int *p, int v) { atomicExch(p, v); }
};

template <class F, class I>
__device__ __forceinline__ I lb_find(I *L, I x)
{
    I p = F::load(L + x);
    while (p != x) {
        I g = F::load(L + p);
        if (g != p)
            F::store(L + x, g);  // path halving: g is an ancestor of x
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

template <class F, class I>
__device__ __forceinline__ void lb_unite(I *L, I a, I b)
{
    for (;;) {
        a = lb_find<F>(L, a);
        b = lb_find<F>(L, b);
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

// Tile geometry: a tile is tw x th elements of one plane (tw * th = LT_SIZE,
// tw a power of two); tiles are numbered x fastest, then y, then plane.
struct Tiles {
    int64_t nz, ny, nx;
    int64_t tiles_x, tiles_y;
    int tw_shift, th;
};

__device__ __forceinline__ void lt_origin(const Tiles &t, int64_t b, int64_t &z, int64_t &y0,
                                          int64_t &x0)
{
    const int64_t tx = b % t.tiles_x;
    const int64_t rest = b / t.tiles_x;
    x0 = tx << t.tw_shift;
    y0 = (rest % t.tiles_y) * t.th;
    z = rest / t.tiles_y;
}

// Init and in-tile unions in one pass: each block loads its tile's mask
// (foreground = any bit set; floating masks are converted to bool on the
// host first) into a shared-memory forest, unites in-plane neighbours that
// lie in the tile, and writes every element's tile root as a global index
// (-1 for background).  Local indices grow with global ones inside a tile,
// so the smallest local index is the smallest global one: the invariants of
// the global forest hold from the start.  F is the shared forest's access
// policy (src/kernels/dev/label_bench.cu times and race-checks others).
template <class S, class I, class F = SharedForest>
__global__ void __launch_bounds__(LT_THREADS)
k_label_local(const S *mask, I *L, Tiles t, Neighbours nb, unsigned int *ticket)
{
    __shared__ int s_L[LT_SIZE];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *ticket = 0;
    int64_t z, y0, x0;
    lt_origin(t, blockIdx.x, z, y0, x0);
    const int tw_mask = (1 << t.tw_shift) - 1;
    const int64_t base = (z * t.ny + y0) * t.nx + x0;
    // The thread's k-th element, local index li = threadIdx.x + k *
    // LT_THREADS, sits at (ly0 + k * sy, lx0 + k * sx) in the tile: a tile
    // at most LT_THREADS wide keeps the column (sy rows down), a wider one
    // (a single row) the row.  So its global index is g0 + k * step and
    // its bounds test two running compares (no per-element index math).
    const bool narrow = (1 << t.tw_shift) <= LT_THREADS;
    const int sx = narrow ? 0 : LT_THREADS, sy = narrow ? LT_THREADS >> t.tw_shift : 0;
    const int lx0 = threadIdx.x & tw_mask, ly0 = threadIdx.x >> t.tw_shift;
    const int64_t step = (int64_t)sy * t.nx + sx;
    const int64_t g0 = base + (int64_t)ly0 * t.nx + lx0;
    const int64_t xleft = t.nx - x0 - lx0, yleft = t.ny - y0 - ly0;
#pragma unroll
    for (int k = 0; k < LT_ITEMS; ++k) {
        const bool in = (int64_t)k * sx < xleft && (int64_t)k * sy < yleft;
        s_L[threadIdx.x + k * LT_THREADS] =
            in && mask[g0 + k * step] != 0 ? (int)threadIdx.x + k * LT_THREADS : -1;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < LT_ITEMS; ++k) {
        const int li = threadIdx.x + k * LT_THREADS;
        if (F::load(s_L + li) < 0)  // an atomic load: other threads' unions write s_L
            continue;
        const int ly = li >> t.tw_shift, lx = li & tw_mask;
        for (int j = 0; j < nb.count; ++j) {
            if (nb.dz[j] != 0)
                continue;
            const int qy = ly + nb.dy[j], qx = lx + nb.dx[j];
            if (qy < 0 || qx < 0 || qx > tw_mask)
                continue;
            const int nj = (qy << t.tw_shift) + qx;
            if (F::load(s_L + nj) >= 0)
                lb_unite<F>(s_L, li, nj);
        }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < LT_ITEMS; ++k) {
        const int li = threadIdx.x + k * LT_THREADS;
        if (!((int64_t)k * sx < xleft && (int64_t)k * sy < yleft))
            continue;
        int r = s_L[li];
        if (r >= 0) {
            while (true) {
                const int p = s_L[r];
                if (p == r)
                    break;
                r = p;
            }
        }
        L[g0 + k * step] =
            r < 0 ? (I)-1 : (I)(base + (int64_t)(r >> t.tw_shift) * t.nx + (r & tw_mask));
    }
}

// Unions across tiles.  Each block visits one tile: with neighbours in
// other planes, every element; otherwise only its border (top row, first
// and last columns), the only elements with neighbours in other tiles.
template <class I>
__global__ void __launch_bounds__(LB_BORDER_THREADS)
k_label_border(I *L, Tiles t, Neighbours nb, int all)
{
    int64_t z, y0, x0;
    lt_origin(t, blockIdx.x, z, y0, x0);
    const int tw = 1 << t.tw_shift;
    const int slots = all ? LT_SIZE : tw + 2 * t.th;
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        int ly, lx;
        if (all) {
            ly = s >> t.tw_shift;
            lx = s & (tw - 1);
        } else if (s < tw) {
            ly = 0;
            lx = s;
        } else if (s < tw + t.th) {
            ly = s - tw;
            lx = 0;
        } else {
            ly = s - tw - t.th;
            lx = tw - 1;
        }
        const int64_t y = y0 + ly, x = x0 + lx;
        if (y >= t.ny || x >= t.nx)
            continue;
        const int64_t i = (z * t.ny + y) * t.nx + x;
        bool fg = false, loaded = false;
        for (int j = 0; j < nb.count; ++j) {
            const int dz = nb.dz[j], dy = nb.dy[j], dx = nb.dx[j];
            // Pairs inside the tile were united by k_label_local.
            if (dz == 0 && ly + dy >= 0 && lx + dx >= 0 && lx + dx < tw)
                continue;
            if (z + dz < 0 || y + dy < 0 || x + dx < 0 || x + dx >= t.nx || y + dy >= t.ny)
                continue;
            if (!loaded) {
                fg = __ldcg(L + i) >= 0;
                loaded = true;
                if (!fg)
                    break;
            }
            const int64_t q = i + nb.offset[j];
            if (__ldcg(L + q) >= 0)
                lb_unite<GlobalForest>(L, (I)i, (I)q);
        }
    }
}

// N consecutive entries at p (aligned to ga_ew_access(sizeof(I), N)) in
// ga_vload's accesses, or one at a time up to `left` entries (-1,
// background, past them) at the end of the array.
template <int N, class I>
__device__ __forceinline__ void lb_load(const I *p, int64_t left, I (&v)[N])
{
    if (left >= N) {
        ga_vload<N>(p, v);
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k)
            v[k] = k < left ? p[k] : (I)-1;
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

// Ranks first (the block scan waits only for loads), then the chains of
// the non-roots, while thread 0 takes the ticket: no warp waits at a
// barrier for another's chain, and only warp 0 of the last tile stays for
// the scan of the tile counts.
template <class I>
__global__ void __launch_bounds__(LB_THREADS)
k_label_flatten(I *L, int64_t n, I *tile_count, I *tile_offset, unsigned int *ticket,
                int64_t *count)
{
    using TileScan = cub::BlockScan<int, LB_THREADS>;
    __shared__ typename TileScan::TempStorage scan;

    const int64_t base = ((int64_t)blockIdx.x << LB_TILE_SHIFT) + (int64_t)threadIdx.x * LB_ITEMS;
    I v[LB_ITEMS];
    lb_load(L + base, n - base, v);
    int roots = 0;
#pragma unroll
    for (int k = 0; k < LB_ITEMS; ++k)
        roots += v[k] == (I)(base + k);
    int rank, total;
    TileScan(scan).ExclusiveSum(roots, rank, total);
#pragma unroll
    for (int k = 0; k < LB_ITEMS; ++k) {
        const I i = (I)(base + k);
        if (v[k] == i)
            L[i] = (I)(-(rank++) - 2);
    }
    bool last = false;
    if (threadIdx.x == 0) {
        tile_count[blockIdx.x] = (I)total;
        last = ga_last_block_thread0(ticket);
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
    if (threadIdx.x >= 32 || !__shfl_sync(0xffffffffu, last, 0))
        return;
    __threadfence();
    // The last tile's warp 0: exclusive scan of the tile counts, 32 *
    // LB_ITEMS at a time.
    const int64_t ntiles = gridDim.x;
    I carry = 0;
    for (int64_t start = 0; start < ntiles; start += 32 * LB_ITEMS) {
        const int64_t first = start + (int64_t)threadIdx.x * LB_ITEMS;
        I c[LB_ITEMS];
        I sum = 0;
#pragma unroll
        for (int k = 0; k < LB_ITEMS; ++k) {
            c[k] = first + k < ntiles ? __ldcg(tile_count + first + k) : (I)0;
            sum += c[k];
        }
        const I incl = ga_warp_inclusive_sum(sum);
        I before = carry + incl - sum;
#pragma unroll
        for (int k = 0; k < LB_ITEMS; ++k) {
            if (first + k < ntiles)
                tile_offset[first + k] = before;
            before += c[k];
        }
        carry += __shfl_sync(0xffffffffu, incl, 31);
    }
    if (threadIdx.x == 0) {
        *count = (int64_t)carry;
        *ticket = 0;
    }
}

// N consecutive outputs (4, 8 or 16 bytes) at dst in one store when
// aligned and whole.
template <int N, class O>
__device__ __forceinline__ void lw_store(O *dst, const O (&o)[N], int64_t left)
{
    static_assert(ga_ew_access(sizeof(O), N) == N * sizeof(O), "one store");
    if (left >= N && ga_misaligned<N, O>(dst) == 0) {
        ga_vstore<N>(dst, o);
        return;
    }
#pragma unroll
    for (int k = 0; k < N; ++k)
        if (k < left)
            dst[k] = o[k];
}

// Each thread writes LW_ITEMS outputs in chunks of lw_chunk<O>() consecutive
// ones, a warp's chunks side by side (each load and store instruction covers
// a contiguous stretch), all loads in flight together: one output a thread
// left too few loads in flight to keep memory busy.
template <class I, class O>
__global__ void __launch_bounds__(GA_BLOCK)
k_label_write(const I *L, int64_t n, const I *tile_offset, O *out)
{
    constexpr int E = lw_chunk<O>();
    constexpr int G = LW_ITEMS / E;
    const int64_t block0 = (int64_t)blockIdx.x * GA_BLOCK * LW_ITEMS;
    I v[G][E];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int64_t first = block0 + ((int64_t)g * GA_BLOCK + threadIdx.x) * E;
        if (first < n)
            lb_load(L + first, n - first, v[g]);
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int64_t first = block0 + ((int64_t)g * GA_BLOCK + threadIdx.x) * E;
        if (first >= n)
            break;
        O o[E];
#pragma unroll
        for (int k = 0; k < E; ++k) {
            const I x = v[g][k];
            I label;
            if (x == (I)-1) {
                label = 0;
            } else if (x < 0) {
                label = tile_offset[(first + k) >> LB_TILE_SHIFT] - x - 1;
            } else {
                const I w = L[x];
                label = tile_offset[(int64_t)x >> LB_TILE_SHIFT] - w - 1;
            }
            o[k] = (O)label;
        }
        lw_store(out + first, o, n - first);
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

// The tiles of k_label_local: rows at least LT_WIDTH wide are cut into
// LT_WIDTH x (LT_SIZE / LT_WIDTH) tiles (each row segment a coalesced
// load, several rows for vertical unions); narrower rows use the next
// power of two as width; a single row (1-d) takes whole LT_SIZE runs.
Tiles make_tiles(const ga_label_args *a)
{
    Tiles t;
    t.nz = a->dims[0];
    t.ny = a->dims[1];
    t.nx = a->dims[2];
    int shift = 0;
    if (t.ny == 1)
        shift = LT_SHIFT;
    else if (t.nx >= LT_WIDTH)
        while ((1 << shift) < LT_WIDTH) shift++;
    else
        while ((int64_t)1 << shift < t.nx) shift++;
    t.tw_shift = shift;
    t.th = LT_SIZE >> shift;
    t.tiles_x = (t.nx + (1 << shift) - 1) >> shift;
    t.tiles_y = (t.ny + t.th - 1) / t.th;
    return t;
}

template <class I>
struct LocalLaunch {
    const ga_label_args *a; I *L; const Tiles &t; const Neighbours &nb; unsigned int *ticket;
    cudaStream_t stream;
    template <class S> cudaError_t operator()()
    {
        const int64_t ntiles = t.tiles_x * t.tiles_y * t.nz;
        k_label_local<S, I><<<(unsigned int)ntiles, LT_THREADS, 0, stream>>>(
            (const S *)a->mask, L, t, nb, ticket);
        return cudaGetLastError();
    }
};

template <class I>
cudaError_t label_run(const ga_label_args *a, cudaStream_t stream)
{
    const int64_t n = label_size(a);
    Scratch<I> s(a->scratch, n);
    const Neighbours nb = make_neighbours(a);
    const Tiles t = make_tiles(a);
    const int64_t ntiles = t.tiles_x * t.tiles_y * t.nz;
    if (ntiles > 0x7fffffff)
        return cudaErrorInvalidValue;
    LocalLaunch<I> local{a, s.L, t, nb, s.ticket, stream};
    cudaError_t err = ga_visit_size(a->mask_itemsize,
                                    ga_only<uint8_t, uint16_t, uint32_t, uint64_t>(local));
    if (err != cudaSuccess)
        return err;
    if (nb.count > 0 && ntiles > 1) {
        int all = 0;
        for (int j = 0; j < nb.count; ++j)
            all |= nb.dz[j] != 0;
        k_label_border<I><<<(unsigned int)ntiles, LB_BORDER_THREADS, 0, stream>>>(s.L, t, nb,
                                                                                   all);
        if ((err = cudaGetLastError()) != cudaSuccess)
            return err;
    }
    k_label_flatten<I><<<(unsigned int)label_tiles(n), LB_THREADS, 0, stream>>>(
        s.L, n, s.tile_count, s.tile_offset, s.ticket, a->count);
    return cudaGetLastError();
}

// Integer outputs are written as the unsigned type of their width (labels
// are non-negative).
template <class I>
struct WriteLaunch {
    const ga_label_args *a; void *out; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        if constexpr (ga_integral<T>)
            return write<ga_unsigned<T>>();
        else
            return write<T>();
    }
    template <class O> cudaError_t write()
    {
        const int64_t n = label_size(a);
        Scratch<I> s(a->scratch, n);
        const int64_t blocks = (n + GA_BLOCK * LW_ITEMS - 1) / (GA_BLOCK * LW_ITEMS);
        k_label_write<I, O><<<(unsigned int)blocks, GA_BLOCK, 0, stream>>>(s.L, n, s.tile_offset,
                                                                           (O *)out);
        return cudaGetLastError();
    }
};

template <class I>
cudaError_t label_write(const ga_label_args *a, ga_type out_type, void *out, cudaStream_t stream)
{
    return ga_visit_type(out_type, ga_only<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                                           uint32_t, uint64_t, float, double>(
                                       WriteLaunch<I>{a, out, stream}));
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
