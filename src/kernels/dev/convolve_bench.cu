// convolve_bench.cu -- the correlation kernels on the device, variant by
// variant, on the lesson's sizes: each checked against a CPU reference and
// timed with CUDA events (median and min of many runs, each after an L2
// flush, and back to back as the Python benchmarks call them), with the
// achieved rate beside its floor.
//
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Isrc/kernels \
//        -o /tmp/convolve_bench src/kernels/dev/convolve_bench.cu && /tmp/convolve_bench
//
// Cases and the variants tried:
// 1. np.convolve, 4.2M float64 * 15 taps, mode full (line kernel):
//    smem   -- block tiles of bx*8 outputs, one barrier-separated stage
//              (39.5 us);
//    warp/t -- the staged phases per warp (tile of 256 outputs), 16-byte
//              stores, no block barriers; a warp takes up to t tiles in two
//              slots, the cp.async copies of the next tile in flight while
//              it computes the current one (t = 1, 2, 4, 8, 16: 34.9, 32.7,
//              32.4, 34.4, 36.6 us);
//    tried and removed: windows read straight from global memory, each
//              thread storing its 8 outputs (8-byte stores 64 bytes
//              apart): 53.3 us; warp/4 compiled for 4 blocks an SM (64
//              registers): 33.6 us.
// 2. gaussian_filter's last-axis pass, 100x1024x1024 float32 * 17 taps,
//    mode reflect: the same (4-byte elements are staged by 16-byte loads
//    through registers: 4-byte cp.async copies took 848-933 us against
//    545 us).
// 3. signal.convolve2d, 2048^2 float64 * 15x15 Gaussian, mode full:
//    tile -- the general kernel (FP64 bound);
//    sep<SR,SBY> -- the separable kernel alone, SR outputs a thread down a
//              column, SBY rows of 64 threads (tile of SR*SBY rows);
//              staging by cp.async (call 1: 8-byte loads through registers,
//              one round trip to memory a value: 66-105 us in float64);
//    sep launch -- what the library launches: factor + separable + the
//              tile kernel returning at once;
//    the same launch with a filter that does not factor (the separable
//              kernel returns at once, the tile kernel runs).
// 4. The same in float32.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../convolve.cu"

#include "bench_common.cuh"

static double g_copy_rate;     // bytes read + written per second, device to device

static void report(const char *name, Timing t, double bytes, double flops, double err)
{
    printf("  %-26s median %8.2f us  min %8.2f us  back-to-back %8.2f us", name, t.med_us,
           t.min_us, t.b2b_us);
    if (bytes > 0)
        printf("  %6.0f GB/s (floor %.1f us)", bytes / t.med_us * 1e-3, bytes / g_copy_rate * 1e6);
    if (flops > 0)
        printf("  %5.2f TFLOP/s", flops / t.med_us * 1e-6);
    printf("  max rel err %.2e%s\n", err, err <= 1e-5 ? "" : "  <-- MISMATCH");
}

template <class T>
static T *dev_copy(const std::vector<T> &h)
{
    T *d;
    CK(cudaMalloc(&d, h.size() * sizeof(T)));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <class T>
static std::vector<T> host_copy(const T *d, size_t n)
{
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

// ------------------------------------------------------------ 1-d lines --

template <class T>
static double line_error(const ga_conv_line &p, const std::vector<T> &x, const std::vector<T> &w,
                         const std::vector<T> &got)
{
    double worst = 0, scale = 0;
    const int64_t n = p.ax.n_out, k = p.ax.k;
    for (int64_t r = 0; r < p.rows; ++r)
        for (int64_t i = 0; i < n; ++i) {
            double acc = 0;
            for (int64_t q = 0; q < k; ++q) {
                int64_t m = ga_ext_index<int64_t>(i + q + p.ax.off, p.ax.n_in, p.mode);
                double xv = m < 0 ? 0.0 : (double)x[r * p.ax.n_in + m];
                acc += (double)w[(p.flags & GA_CONV_FLIP) ? k - 1 - q : q] * xv;
            }
            worst = std::max(worst, std::fabs(acc - (double)got[r * n + i]));
            scale = std::max(scale, std::fabs(acc));
        }
    return worst / std::max(scale, 1e-300);
}

template <class T>
static void line_case(const char *title, int64_t rows, int64_t n, int64_t k, int64_t off, int mode,
                      int flags, int bx_smem, int by_smem, int kchunk_smem)
{
    printf("%s\n", title);
    std::mt19937_64 rng(1);
    std::normal_distribution<double> nd;
    const int64_t n_out = n - k + 1 - 2 * off;
    std::vector<T> hx(rows * n), hw(k);
    for (auto &v : hx) v = (T)nd(rng);
    for (auto &v : hw) v = (T)nd(rng);
    T *x = dev_copy(hx), *w = dev_copy(hw), *out;
    CK(cudaMalloc(&out, rows * n_out * sizeof(T)));
    const double bytes = (double)sizeof(T) * rows * (n + n_out);
    for (const char *variant : {"smem", "warp/1", "warp/2", "warp/4", "warp/8"}) {
        ga_conv_line p;
        memset(&p, 0, sizeof(p));
        p.rows = rows;
        p.ax = ga_conv_axis{n, n_out, k, off};
        p.mode = mode;
        p.flags = flags;
        p.bx = bx_smem;
        p.by = by_smem;
        p.kchunk = kchunk_smem;
        if (strcmp(variant, "smem") != 0) {
            p.by = 1;
            p.kchunk = (int)k;
            p.warp = atoi(variant + 5);
            p.bx = 32;
        }
        ga_type type = sizeof(T) == 4 ? GA_FLOAT32 : GA_FLOAT64;
        auto launch = [&] {
            ga_launch_conv_line(type, &p, (const char *)x, (const char *)w, (char *)out, 0);
        };
        CK(cudaMemset(out, 0xff, rows * n_out * sizeof(T)));
        launch();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        // The reference over a few rows only when there are many.
        ga_conv_line pc = p;
        pc.rows = std::min<int64_t>(rows, 8);
        std::vector<T> got = host_copy(out, pc.rows * n_out);
        double err = line_error(pc, hx, hw, got);
        report(variant, timeit(launch), bytes, 0, err);
    }
    CK(cudaFree(x));
    CK(cudaFree(w));
    CK(cudaFree(out));
}

// ------------------------------------------------------------ 2-d tiles --

// Max error relative to the result's scale at `samples` random outputs and
// every output of the first and last rows.
template <class T>
static double tile_error(const ga_conv_tile &p, const std::vector<T> &x, const std::vector<T> &w,
                         const std::vector<T> &got)
{
    std::mt19937_64 rng(7);
    std::vector<std::pair<int64_t, int64_t>> at;
    for (int i = 0; i < 20000; ++i)
        at.push_back({(int64_t)(rng() % p.h.n_out), (int64_t)(rng() % p.w.n_out)});
    for (int64_t c = 0; c < p.w.n_out; ++c) {
        at.push_back({0, c});
        at.push_back({p.h.n_out - 1, c});
    }
    double worst = 0, scale = 0;
    const int64_t kh = p.h.k, kw = p.w.k, n = kh * kw;
    for (auto [r, c] : at) {
        double acc = 0;
        for (int64_t i = 0; i < kh; ++i) {
            int64_t gr = ga_ext_index<int64_t>(r + i + p.h.off, p.h.n_in, p.mode);
            for (int64_t j = 0; j < kw; ++j) {
                int64_t gc = ga_ext_index<int64_t>(c + j + p.w.off, p.w.n_in, p.mode);
                double xv = gr < 0 || gc < 0 ? 0.0 : (double)x[gr * p.w.n_in + gc];
                int64_t e = i * kw + j;
                acc += (double)w[(p.flags & GA_CONV_FLIP) ? n - 1 - e : e] * xv;
            }
        }
        worst = std::max(worst, std::fabs(acc - (double)got[r * p.w.n_out + c]));
        scale = std::max(scale, std::fabs(acc));
    }
    return worst / std::max(scale, 1e-300);
}

template <class T, int SR, int SBY>
static void sep_alone(const char *name, const ga_conv_tile &p, const T *x, T *fac, T *out,
                      const std::vector<T> &hx, const std::vector<T> &hw, double bytes)
{
    const size_t smem = (size_t)sep_smem<SR, SBY>(p) * sizeof(T);
    if (smem > CV_SMEM_MAX)
        CK(cudaFuncSetAttribute(k_conv_sep<T, SR, SBY>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem));
    const unsigned blocks = (unsigned)sep_blocks<SR, SBY>(p);
    auto run = [&] {
        k_conv_sep<T, SR, SBY><<<blocks, dim3(SBX, SBY), smem>>>(p, x, fac, out);
    };
    const size_t n_out = p.h.n_out * p.w.n_out;
    CK(cudaMemset(out, 0xff, n_out * sizeof(T)));
    run();
    CK(cudaDeviceSynchronize());
    double err = tile_error(p, hx, hw, host_copy(out, n_out));
    char label[64];
    snprintf(label, sizeof(label), "%s R%d BY%d (%zu KB)", name, SR, SBY, smem / 1024);
    report(label, timeit(run), bytes, 0, err);
}

template <class T>
static void tile_case(const char *title)
{
    printf("%s\n", title);
    const int64_t n = 2048, k = 15, n_out = n + k - 1;
    ga_type type = sizeof(T) == 4 ? GA_FLOAT32 : GA_FLOAT64;
    std::mt19937_64 rng(2);
    std::normal_distribution<double> nd;
    std::vector<T> hx(n * n), hg(k * k), hr(k * k);
    for (auto &v : hx) v = (T)nd(rng);
    for (int64_t i = 0; i < k; ++i)     // the lesson's Gaussian, exp(-r^2/2) on [-2, 2]^2
        for (int64_t j = 0; j < k; ++j) {
            double a = -2 + 4.0 * i / (k - 1), b = -2 + 4.0 * j / (k - 1);
            double d = std::sqrt(a * a + b * b);
            hg[i * k + j] = (T)std::exp(-(d * d) / 2.0);
        }
    for (auto &v : hr) v = (T)nd(rng);  // not separable
    T *x = dev_copy(hx), *g = dev_copy(hg), *r = dev_copy(hr), *out, *fac;
    CK(cudaMalloc(&out, n_out * n_out * sizeof(T)));
    CK(cudaMalloc(&fac, (1 + 2 * k) * sizeof(T)));
    ga_conv_tile p;
    memset(&p, 0, sizeof(p));
    p.h = p.w = ga_conv_axis{n, n_out, k, -(k - 1)};
    p.flags = GA_CONV_FLIP;
    p.kh_chunk = p.kw_chunk = (int)k;
    const double bytes = (double)sizeof(T) * (n * n + n_out * n_out);
    const double flops = 2.0 * k * k * n_out * n_out;

    auto check_run = [&](const char *name, const T *wd, const std::vector<T> &hwv, auto launch,
                         double fl) {
        CK(cudaMemset(out, 0xff, n_out * n_out * sizeof(T)));
        launch();
        CK(cudaDeviceSynchronize());
        double err = tile_error(p, hx, hwv, host_copy(out, n_out * n_out));
        report(name, timeit(launch), bytes, fl, err);
    };
    check_run("tile (general)", g, hg, [&] {
        ga_launch_conv_tile(type, &p, (const char *)x, (const char *)g, (char *)out, 0);
    }, flops);
    // Factors of the Gaussian for the separable kernel alone.
    k_conv_factor<T><<<1, 256>>>(p, g, fac);
    CK(cudaDeviceSynchronize());
    std::vector<T> hf = host_copy(fac, 1 + 2 * k);
    printf("  factor flag for the Gaussian: %g (want 1)\n", (double)hf[0]);
    sep_alone<T, 8, 4>("sep", p, x, fac, out, hx, hg, bytes);
    sep_alone<T, 16, 4>("sep", p, x, fac, out, hx, hg, bytes);
    sep_alone<T, 8, 8>("sep", p, x, fac, out, hx, hg, bytes);
    sep_alone<T, 16, 2>("sep", p, x, fac, out, hx, hg, bytes);
    sep_alone<T, 4, 8>("sep", p, x, fac, out, hx, hg, bytes);
    check_run("sep launch (Gaussian)", g, hg, [&] {
        ga_launch_conv_tile_sep(type, &p, (const char *)x, (const char *)g, (char *)fac,
                                (char *)out, 0);
    }, 0);
    check_run("sep launch (random)", r, hr, [&] {
        ga_launch_conv_tile_sep(type, &p, (const char *)x, (const char *)r, (char *)fac,
                                (char *)out, 0);
    }, flops);
    hf = host_copy(fac, 1 + 2 * k);
    printf("  factor flag for the random filter: %g (want 0)\n", (double)hf[0]);
    check_run("tile (random)", r, hr, [&] {
        ga_launch_conv_tile(type, &p, (const char *)x, (const char *)r, (char *)out, 0);
    }, flops);
    CK(cudaFree(x));
    CK(cudaFree(g));
    CK(cudaFree(r));
    CK(cudaFree(out));
    CK(cudaFree(fac));
}

int main()
{
    g_copy_rate = device_copy_rate((size_t)8 << 22);     // 4M doubles
    const int64_t n = 2048 * 2048;
    line_case<double>("1. np.convolve 4.2M f64 * 15, full", 1, n, 15, -14, GA_EXT_CONSTANT,
                      GA_CONV_FLIP, 256, 1, 15);
    line_case<float>("2. gaussian_filter last axis 100x1024x1024 f32 * 17, reflect", 100 * 1024,
                     1024, 17, -8, GA_EXT_REFLECT, 0, 128, 2, 17);
    tile_case<double>("3. convolve2d 2048^2 f64 * 15x15, full");
    tile_case<float>("4. convolve2d 2048^2 f32 * 15x15, full");
    return 0;
}
