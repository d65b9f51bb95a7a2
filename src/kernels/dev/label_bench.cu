// label_bench.cu -- the in-tile union-find of label.cu (k_label_local) with
// each way of accessing its shared-memory forest: every variant checked
// against a CPU reference (each element's tile root = the smallest index of
// its in-tile component), timed with CUDA events (median and min of many
// back-to-back runs), and small enough to run under compute-sanitizer's
// racecheck, one variant a process:
//
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Isrc/kernels \
//        -o /tmp/label_bench src/kernels/dev/label_bench.cu
//   /tmp/label_bench [mask.u8|-] [variant [size]]
//   compute-sanitizer --tool racecheck /tmp/label_bench - rmw 256
//
// mask.u8: 2048 x 2048 bytes, 0 or 1 (e.g. the lesson's segmented sky:
// (img > threshold).astype(np.uint8).tofile(...)); always random masks of
// size x size (2048 unless given) as well.  Under racecheck a 2048^2
// launch takes ~30 s: race-check one variant on 256^2 masks.  The kernel reads the mask as int64, as the lesson passes it.
// Exits non-zero when a variant's output differs from the reference.
//
// Variants, median us for the 2048^2 segmented sky (0.4% foreground) /
// random 50% / random 5% masks on an H100:
//   volatile -- plain volatile loads and stores, atomicMin links (label.cu
//               until racecheck reported 1670 hazards over test_label.py:
//               racing plain accesses are data races): 53.5 / 186.7 / 46.0;
//   relaxed  -- cuda::atomic_ref relaxed loads/stores at block scope:
//               54.8 / 186.3 / 44.5, but racecheck still reports them;
//   rmw      -- loads as atomicOr(p, 0), stores as atomicExch (label.cu's
//               SharedForest): 53.7 / 195.7 / 46.6.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <cuda/atomic>

#include "../label.cu"
#include "bench_common.cuh"

namespace {

struct VolatileForest {
    template <class I> __device__ __forceinline__ static I load(const I *p)
    {
        return *(const volatile I *)p;
    }
    template <class I> __device__ __forceinline__ static void store(I *p, I v)
    {
        *(volatile I *)p = v;
    }
};

struct RelaxedForest {
    __device__ __forceinline__ static int load(const int *p)
    {
        return cuda::atomic_ref<int, cuda::thread_scope_block>(*const_cast<int *>(p))
            .load(cuda::memory_order_relaxed);
    }
    __device__ __forceinline__ static void store(int *p, int v)
    {
        cuda::atomic_ref<int, cuda::thread_scope_block>(*p).store(v, cuda::memory_order_relaxed);
    }
};

// Each element's tile root (smallest linear index of its in-tile
// 4-connected component), -1 for background.
std::vector<int32_t> reference(const std::vector<uint64_t> &m, int64_t ny, int64_t nx,
                               const Tiles &t)
{
    std::vector<int32_t> L(m.size(), -1);
    const int tw = 1 << t.tw_shift;
    std::vector<int64_t> stack;
    for (int64_t ty = 0; ty < t.tiles_y; ++ty)
        for (int64_t tx = 0; tx < t.tiles_x; ++tx) {
            const int64_t y0 = ty * t.th, x0 = tx * tw;
            const int64_t y1 = std::min(ny, y0 + t.th), x1 = std::min(nx, x0 + tw);
            for (int64_t y = y0; y < y1; ++y)
                for (int64_t x = x0; x < x1; ++x) {
                    const int64_t s = y * nx + x;
                    if (!m[s] || L[s] >= 0)
                        continue;
                    // raster order: s is the smallest index of its component
                    L[s] = (int32_t)s;
                    stack.assign(1, s);
                    while (!stack.empty()) {
                        const int64_t i = stack.back();
                        stack.pop_back();
                        const int64_t iy = i / nx, ix = i % nx;
                        const int64_t nbr[4][2] = {{iy - 1, ix}, {iy + 1, ix}, {iy, ix - 1},
                                                   {iy, ix + 1}};
                        for (auto &q : nbr) {
                            if (q[0] < y0 || q[0] >= y1 || q[1] < x0 || q[1] >= x1)
                                continue;
                            const int64_t j = q[0] * nx + q[1];
                            if (m[j] && L[j] < 0) {
                                L[j] = (int32_t)s;
                                stack.push_back(j);
                            }
                        }
                    }
                }
        }
    return L;
}

template <class F>
void launch(const uint64_t *mask, int32_t *L, const Tiles &t, const Neighbours &nb,
            unsigned int *ticket)
{
    const int64_t ntiles = t.tiles_x * t.tiles_y * t.nz;
    k_label_local<uint64_t, int32_t, F><<<(unsigned int)ntiles, LT_THREADS>>>(mask, L, t, nb,
                                                                             ticket);
}

template <class F>
bool run(const char *name, const char *only, const std::vector<uint64_t> &m,
         const std::vector<int32_t> &ref, const Tiles &t, const Neighbours &nb, int reps)
{
    if (only && strcmp(only, name) != 0)
        return true;
    const size_t n = m.size();
    uint64_t *d_mask;
    int32_t *d_L;
    unsigned int *d_ticket;
    CK(cudaMalloc(&d_mask, n * 8));
    CK(cudaMalloc(&d_L, n * 4));
    CK(cudaMalloc(&d_ticket, 4));
    CK(cudaMemcpy(d_mask, m.data(), n * 8, cudaMemcpyHostToDevice));
    launch<F>(d_mask, d_L, t, nb, d_ticket);
    CK(cudaGetLastError());
    std::vector<int32_t> L(n);
    CK(cudaMemcpy(L.data(), d_L, n * 4, cudaMemcpyDeviceToHost));
    const bool ok = L == ref;
    std::vector<float> ms;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(a));
        launch<F>(d_mask, d_L, t, nb, d_ticket);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float x;
        CK(cudaEventElapsedTime(&x, a, b));
        ms.push_back(x);
    }
    std::sort(ms.begin(), ms.end());
    if (reps)
        printf("  %-9s %s  median %7.2f us  min %7.2f us\n", name, ok ? "ok  " : "DIFF",
               1e3 * ms[ms.size() / 2], 1e3 * ms[0]);
    else
        printf("  %-9s %s\n", name, ok ? "ok" : "DIFF");
    CK(cudaFree(d_mask));
    CK(cudaFree(d_L));
    CK(cudaFree(d_ticket));
    return ok;
}

bool bench(const char *title, const std::vector<uint64_t> &m, int64_t ny, int64_t nx,
           const char *only, int reps)
{
    ga_label_args args{};
    args.dims[0] = 1;
    args.dims[1] = ny;
    args.dims[2] = nx;
    args.neighbours = (1u << 10) | (1u << 12);  // 4-connectivity: (dy, dx) = (-1, 0), (0, -1)
    const Tiles t = make_tiles(&args);
    const Neighbours nb = make_neighbours(&args);
    const std::vector<int32_t> ref = reference(m, ny, nx, t);
    const int64_t fg = std::count(m.begin(), m.end(), (uint64_t)1);
    printf("%s: %lld x %lld, %.1f%% foreground\n", title, (long long)ny, (long long)nx,
           100.0 * fg / m.size());
    bool ok = run<VolatileForest>("volatile", only, m, ref, t, nb, reps);
    ok &= run<RelaxedForest>("relaxed", only, m, ref, t, nb, reps);
    ok &= run<SharedForest>("rmw", only, m, ref, t, nb, reps);
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    const char *only = argc > 2 ? argv[2] : nullptr;
    const int reps = only ? 3 : 200;  // one variant: a race-check run
    const int64_t side = argc > 3 ? atoll(argv[3]) : 2048;
    std::vector<uint64_t> m(2048 * 2048);
    bool ok = true;
    if (argc > 1 && strcmp(argv[1], "-") != 0) {
        FILE *f = fopen(argv[1], "rb");
        std::vector<uint8_t> b(m.size());
        if (!f || fread(b.data(), 1, b.size(), f) != b.size()) {
            fprintf(stderr, "cannot read %zu bytes from %s\n", b.size(), argv[1]);
            return 2;
        }
        fclose(f);
        std::copy(b.begin(), b.end(), m.begin());
        ok &= bench(argv[1], m, 2048, 2048, only, reps);
    }
    m.resize(side * side);
    std::mt19937_64 gen(12345);
    for (double p : {0.5, 0.05}) {
        std::bernoulli_distribution fg(p);
        for (auto &v : m)
            v = fg(gen);
        ok &= bench(p == 0.5 ? "random 50%" : "random 5%", m, side, side, only, reps);
    }
    puts(ok ? "all variants agree with the reference" : "MISMATCH");
    return ok ? 0 : 1;
}
