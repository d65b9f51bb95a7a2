// clip_bench.cu -- where the time of sigma clipping one large float32 array
// goes (stats.cu), and a check of the cooperative kernel against the
// launch-per-pass path on the same data.
//
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Isrc/kernels \
//        -o /tmp/clip_bench src/kernels/dev/clip_bench.cu && /tmp/clip_bench [sky.f32]
//
// sky.f32: raw float32 values (e.g. gpuarr.datasets.synthetic_sky(2048)
// .tofile(...)); without it, normal data.  A second data set is always
// normal(10, 2) with 3% outliers (crowded first digit).  Prints, with CUDA
// events, median of many runs (the data stay in L2, as in the benchmark):
//   * a plain read of the data with the clipping grid (the floor of a pass),
//   * a grid-wide barrier,
//   * the first pass's kinds of work in isolation: moments only, moments and
//     a first-digit histogram with plain shared atomics (what stats.cu
//     does), with warp aggregation,
//   * every pass of the launch-per-pass path to convergence (k_clip_pass),
//   * the cooperative kernel to convergence and with maxiters = 1..8,
// and exits non-zero when the cooperative kernel's final state (count,
// median, std, bounds, iterations) differs from the per-pass path's.
//
// Versions tried, 2048^2 sky on an H100 (cooperative kernel to convergence,
// 8 clips + the pass that finds nothing clipped):
//  (1) 3 radix passes per iteration, warp-aggregated (__match_any_sync)
//      first digit (commit 7be41d9): 22 passes, ~610 us;
//  (2) + gathering the candidates of a bracket around the last median (one
//      pass per iteration when it holds the new median) and of small bins,
//      bitonic-sorted in shared memory: ~530 us -- the aggregated first
//      digit (34 us a pass, 15 us with plain atomics) and the sort of 4096
//      keys (~19 us) dominated;
//  (3) plain atomics, candidates binned by key and only the middle bins
//      sorted, brackets sized by the last clip, 16-byte loads.
//  (4) the grid kernel traced round by round (clip_trace.py, block 0's
//      globaltimer; 2048^2 sky, 11 rounds, 7 clips): the pick after each
//      barrier took 4-13 us (four scans of one histogram, a 36-stage sort
//      of the middle keys) and a pass 12-17 us with every flag tested per
//      value: one scan for all ranks, the few middle keys ranked by
//      counting, the scan specialised per kind of pass: 306 -> 232 us.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../stats.cu"

#include "bench_common.cuh"

namespace {

// ---- micro-kernels: the pieces of a first pass ----

__global__ void __launch_bounds__(CL_THREADS) k_read(const float *x, int64_t n, float *out)
{
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    float s = 0.0f;
    for (int64_t base = first; base < n; base += stride * CL_ITEMS) {
        float v[CL_ITEMS];
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k)
            v[k] = base + k * stride < n ? x[base + k * stride] : 0.0f;
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k)
            s += v[k];
    }
    if (s == 12345.678f)
        *out = s;
}

// MODE 0: moments only; 1: + first-digit histogram, plain shared atomics;
// 2: + warp-aggregated (__match_any_sync) as stats.cu.  Nonzero bins are
// added to a global histogram, as a pass does.
template <int MODE>
__global__ void __launch_bounds__(CL_THREADS)
k_first_pass(const float *x, int64_t n, float lo, float hi, unsigned long long *gh, double *out)
{
    __shared__ unsigned int hist[GA_RADIX_BINS];
    for (int k = threadIdx.x; k < GA_RADIX_BINS; k += blockDim.x)
        hist[k] = 0;
    __syncthreads();
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double m0 = 0, m1 = 0, m2 = 0;
    for (int64_t base = first; base < n; base += stride * CL_ITEMS) {
        float v[CL_ITEMS];
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k)
            v[k] = base + k * stride < n ? x[base + k * stride] : 0.0f;
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k) {
            const bool in = base + k * stride < n && v[k] > lo && v[k] < hi;
            if (in) {
                const double d = (double)v[k];
                m0 += 1.0;
                m1 += d;
                m2 += d * d;
            }
            const unsigned int bin = ClipKey<float>::enc(v[k]) >> 21;
            if (MODE == 1 && in)
                atomicAdd(hist + bin, 1u);
            if (MODE == 2) {
                const unsigned int b = in ? bin : 0xffffffffu;
                const unsigned int active = __activemask();
                const unsigned int peers = __match_any_sync(active, b);
                if (in && (threadIdx.x & 31) == __ffs(peers) - 1)
                    atomicAdd(hist + b, (unsigned int)__popc(peers));
            }
        }
    }
    __syncthreads();
    if (MODE > 0)
        for (int k = threadIdx.x; k < GA_RADIX_BINS; k += blockDim.x)
            if (hist[k])
                atomicAdd(gh + k, (unsigned long long)hist[k]);
    if (m0 + m1 + m2 == -1.0)
        *out = m0;
}

__global__ void __launch_bounds__(CL_THREADS) k_read_vec(const float4 *x, int64_t n4, float *out)
{
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    float s = 0.0f;
    for (int64_t base = first; base < n4; base += stride * CL_VITEMS) {
        float4 v[CL_VITEMS];
#pragma unroll
        for (int k = 0; k < CL_VITEMS; ++k)
            v[k] = base + k * stride < n4 ? x[base + k * stride] : float4{};
#pragma unroll
        for (int k = 0; k < CL_VITEMS; ++k)
            s += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    if (s == 12345.678f)
        *out = s;
}

__global__ void k_sync_loop(int rounds, unsigned int *sink)
{
    cg::grid_group grid = cg::this_grid();
    for (int r = 0; r < rounds; ++r)
        grid.sync();
    if (threadIdx.x == 0 && blockIdx.x == 0)
        *sink = rounds;
}

// ---- timing ----

struct Timer {
    cudaEvent_t a, b;
    Timer() { CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b)); }
    template <class F> double median_us(F &&f, int n = 50)
    {
        for (int i = 0; i < 5; ++i)
            f();
        CK(cudaDeviceSynchronize());
        std::vector<double> t;
        for (int i = 0; i < n; ++i) {
            CK(cudaEventRecord(a));
            f();
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            t.push_back(1e3 * ms);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

struct Clip {
    ga_clip_args a;
    ga_clip_state *state;
    void *scratch;
    Clip(const float *data, int64_t n, int grid)
    {
        memset(&a, 0, sizeof(a));
        a.type = GA_FLOAT32;
        a.data = data;
        a.nrows = 1;
        a.rowlen = n;
        a.sigma_lower = a.sigma_upper = 3.0;
        a.inclusive = 0;
        a.cen_median = 1;
        a.maxiters = -1;
        a.grid = grid;
        CK(cudaMalloc(&state, sizeof(ga_clip_state)));
        a.state = state;
        CK(cudaMalloc(&scratch, ga_clip_scratch_bytes(&a)));
        a.scratch = scratch;
    }
    void init() { CK(ga_launch_clip_init(&a, 0)); }
    ga_clip_state get()
    {
        ga_clip_state s;
        CK(cudaMemcpy(&s, state, sizeof(s), cudaMemcpyDeviceToHost));
        return s;
    }
};

int run(const char *name, const std::vector<float> &host, int sms)
{
    const int64_t n = (int64_t)host.size();
    float *x;
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    const int64_t blocks = (n + 1023) / 1024, cap = 2 * (int64_t)sms;
    const int grid = (int)std::min(blocks, cap);
    printf("\n== %s: %lld values, grid %d x %d\n", name, (long long)n, grid, CL_THREADS);
    Timer tm;
    float *fsink;
    double *dsink;
    unsigned long long *gh;
    unsigned int *usink;
    CK(cudaMalloc(&fsink, 64));
    CK(cudaMalloc(&dsink, 64));
    CK(cudaMalloc(&usink, 64));
    CK(cudaMalloc(&gh, GA_RADIX_BINS * sizeof(unsigned long long)));

    const double t_read = tm.median_us([&] { k_read<<<grid, CL_THREADS>>>(x, n, fsink); });
    printf("plain read of the data            %8.2f us  (%.0f GB/s)\n", t_read,
           n * 4.0 / t_read * 1e-3);
    const double t_vec = tm.median_us([&] {
        k_read_vec<<<grid, CL_THREADS>>>((const float4 *)x, n / 4, fsink);
    });
    printf("  with 16-byte loads               %8.2f us  (%.0f GB/s)\n", t_vec,
           n * 4.0 / t_vec * 1e-3);
    const float lo = -INFINITY, hi = INFINITY;
    const double t0 = tm.median_us([&] { k_first_pass<0><<<grid, CL_THREADS>>>(x, n, lo, hi, gh, dsink); });
    const double t1 = tm.median_us([&] { k_first_pass<1><<<grid, CL_THREADS>>>(x, n, lo, hi, gh, dsink); });
    const double t2 = tm.median_us([&] { k_first_pass<2><<<grid, CL_THREADS>>>(x, n, lo, hi, gh, dsink); });
    printf("first pass: moments only           %8.2f us\n", t0);
    printf("  + histogram, plain atomics       %8.2f us\n", t1);
    printf("  + histogram, match_any aggregate %8.2f us\n", t2);
    {
        int rounds = 1000;
        void *params[] = {&rounds, &usink};
        const double t = tm.median_us([&] {
            CK(cudaLaunchCooperativeKernel((const void *)k_sync_loop, dim3(grid), dim3(CL_THREADS),
                                           params, 0, 0));
        }, 10);
        printf("grid.sync() (%d blocks)            %8.3f us each\n", grid, t / rounds);
    }

    // launch-per-pass path, every pass timed
    Clip pp(x, n, grid);
    const int NP = 3;
    std::vector<std::vector<double>> per;  // [iteration*NP + pass] -> times
    cudaEvent_t ev[64 * (NP + 1)];
    for (auto &e : ev)
        CK(cudaEventCreate(&e));
    int iters = 0;
    for (int rep = 0; rep < 11; ++rep) {
        pp.init();
        int it = 0;
        for (; it < 64; ++it) {
            CK(cudaEventRecord(ev[it * (NP + 1)]));
            for (int p = 0; p < NP; ++p) {
                k_clip_pass<float><<<grid, CL_THREADS>>>(pp.a, 0, p, 0);
                CK(cudaGetLastError());
                CK(cudaEventRecord(ev[it * (NP + 1) + p + 1]));
            }
            CK(cudaEventSynchronize(ev[it * (NP + 1) + NP]));
            if (pp.get().done)
                break;
        }
        iters = it + 1;
        if (per.size() < (size_t)iters * NP)
            per.resize((size_t)iters * NP);
        for (int it = 0; it < iters; ++it) {
            for (int p = 0; p < NP; ++p) {
                float ms;
                CK(cudaEventElapsedTime(&ms, ev[it * (NP + 1) + p], ev[it * (NP + 1) + p + 1]));
                per[it * NP + p].push_back(1e3 * ms);
            }
        }
    }
    const ga_clip_state ref = pp.get();
    printf("launch per pass: %d iterations (the last finds nothing clipped)\n", iters);
    double total = 0;
    for (int it = 0; it < iters; ++it) {
        printf("  iteration %2d:", it + 1);
        for (int p = 0; p < NP; ++p) {
            auto v = per[it * NP + p];
            std::sort(v.begin(), v.end());
            printf("  pass %d %7.2f us", p, v[v.size() / 2]);
            total += v[v.size() / 2];
        }
        printf("\n");
    }
    printf("  sum %.1f us; final: count %lld median %.9g std %.9g lo %.9g hi %.9g it %lld\n",
           total, (long long)ref.count, ref.median, ref.std, ref.lo, ref.hi,
           (long long)ref.iterations);

    // the cooperative kernel
    Clip g(x, n, grid);
    auto coop = [&](int64_t maxiters, int final_stats) {
        g.a.maxiters = maxiters;
        g.init();
        CK(ga_launch_clip_grid(&g.a, final_stats, 0));
    };
    coop(-1, 1);
    CK(cudaDeviceSynchronize());
    const ga_clip_state got = g.get();
    coop(-1, 0);
    CK(cudaDeviceSynchronize());
    const ga_clip_state got0 = g.get();
    printf("cooperative: count %lld median %.9g std %.9g lo %.9g hi %.9g it %lld\n",
           (long long)got.count, got.median, got.std, got.lo, got.hi, (long long)got.iterations);
    // converged: the last median and std are those of the survivors
    const int bad = got.count != ref.count || got.lo != ref.lo || got.hi != ref.hi ||
                    got.iterations != ref.iterations || got.median != ref.median ||
                    got.std != ref.std || got0.count != ref.count || got0.lo != ref.lo ||
                    got0.hi != ref.hi || got0.median != ref.median;
    printf("cooperative vs per-pass: %s\n", bad ? "DIFFERENT" : "same");
    const double full = tm.median_us([&] { coop(-1, 0); });
    printf("cooperative to convergence (init + kernel)   %8.2f us\n", full);
    double prev = 0;
    for (int m = 1; m <= 8; ++m) {
        const double t = tm.median_us([&] { coop(m, 0); }, 30);
        printf("  maxiters=%d %8.2f us  (+%.2f)\n", m, t, t - prev);
        prev = t;
    }
    const double init = tm.median_us([&] { g.init(); });
    printf("  init + clear alone %8.2f us\n", init);
    CK(cudaFree(x));
    return bad;
}

} // namespace

int main(int argc, char **argv)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs, L2 %d MB\n", prop.name, sms, prop.l2CacheSize >> 20);
    std::vector<float> sky;
    if (argc > 1) {
        FILE *f = fopen(argv[1], "rb");
        if (!f) {
            perror(argv[1]);
            return 2;
        }
        fseek(f, 0, SEEK_END);
        const long bytes = ftell(f);
        fseek(f, 0, SEEK_SET);
        sky.resize(bytes / 4);
        if (fread(sky.data(), 4, sky.size(), f) != sky.size())
            return 2;
        fclose(f);
    }
    std::mt19937_64 rng(7);
    std::normal_distribution<float> normal(10.0f, 2.0f);
    std::uniform_real_distribution<float> uni(8.0f, 80.0f);
    std::vector<float> crowd(1 << 22);
    for (auto &v : crowd) {
        v = normal(rng);
        if (rng() % 100 < 3)
            v += (rng() % 10 < 3 ? -1.0f : 1.0f) * uni(rng);
    }
    int bad = 0;
    if (!sky.empty())
        bad |= run("sky", sky, sms);
    bad |= run("normal(10, 2) + 3% outliers", crowd, sms);
    printf("\n%s\n", bad ? "FAILED: cooperative kernel differs" : "ok");
    return bad;
}
