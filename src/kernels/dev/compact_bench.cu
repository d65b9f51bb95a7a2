// compact_bench.cu -- stream compaction on the device, the library's kernel
// beside CUB's DeviceSelect::Flagged, on the sizes of issue 4 (compress_4M):
// each checked against a CPU reference and timed with CUDA events (median
// and min of many runs, each after an L2 flush, and back to back), with the
// achieved rate beside the copy rate.
//
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Isrc/kernels \
//        -o /tmp/compact_bench src/kernels/dev/compact_bench.cu && /tmp/compact_bench
//
// Variants:
//   lookback -- ga_launch_compact: one memset and one single-pass launch
//               with decoupled look-back (what the library runs);
//   cub      -- cub::DeviceSelect::Flagged: the first implementation (two
//               launches and its own temporary storage), once selectable in
//               the library by _core._set_compaction and moved here.
// Cases: float32 values over sizes 1K..16M (density 0.999) and densities
// 0, 0.5, 0.999 at 4.2M; then the positions of the true flags (nonzero's
// int64 output, CUB over a counting iterator) at 4.2M.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "../compact.cu"

#include "bench_common.cuh"

static double g_copy_rate;     // bytes read + written per second, device to device

// Both variants on n elements of itemsize 4 (float32), or with itemsize 0
// the int64 positions; prints one line each.
static void compact_case(int64_t n, double density, int itemsize, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<float> ud(0.0f, 1.0f);
    std::vector<float> hv(n);
    std::vector<uint8_t> hf(n);
    std::vector<float> want_v;
    std::vector<int64_t> want_i;
    for (int64_t i = 0; i < n; ++i) {
        hv[i] = ud(rng);
        hf[i] = ud(rng) < density;
        if (hf[i]) {
            want_v.push_back(hv[i]);
            want_i.push_back(i);
        }
    }
    const int64_t kept = (int64_t)want_i.size();
    const size_t out_item = itemsize ? 4 : 8;
    float *src;
    uint8_t *flags;
    char *dst;
    int64_t *count;
    CK(cudaMalloc(&src, n * sizeof(float)));
    CK(cudaMalloc(&flags, n));
    CK(cudaMalloc(&dst, n * out_item));
    CK(cudaMalloc(&count, sizeof(int64_t)));
    CK(cudaMemcpy(src, hv.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(flags, hf.data(), n, cudaMemcpyHostToDevice));

    size_t lb_bytes = 0, cub_bytes = 0;
    CK(ga_launch_compact(itemsize, n, nullptr, nullptr, nullptr, nullptr, nullptr, &lb_bytes,
                         0));
    if (itemsize)
        CK(cub::DeviceSelect::Flagged(nullptr, cub_bytes, src, flags, (float *)dst, count, n));
    else
        CK(cub::DeviceSelect::Flagged(nullptr, cub_bytes, thrust::counting_iterator<int64_t>(0),
                                      flags, (int64_t *)dst, count, n));
    void *lb_temp, *cub_temp;
    CK(cudaMalloc(&lb_temp, lb_bytes ? lb_bytes : 1));
    CK(cudaMalloc(&cub_temp, cub_bytes ? cub_bytes : 1));

    auto lookback = [&] {
        CK(ga_launch_compact(itemsize, n, (const char *)src, flags, dst, count, lb_temp,
                             &lb_bytes, 0));
    };
    auto cub_flagged = [&] {
        if (itemsize)
            CK(cub::DeviceSelect::Flagged(cub_temp, cub_bytes, src, flags, (float *)dst, count,
                                          n));
        else
            CK(cub::DeviceSelect::Flagged(cub_temp, cub_bytes,
                                          thrust::counting_iterator<int64_t>(0), flags,
                                          (int64_t *)dst, count, n));
    };
    // Bytes moved: flags and (for values) the values read, the kept written.
    const double bytes = (double)n * (1 + itemsize) + (double)kept * out_item;
    const char *names[2] = {"lookback", "cub"};
    for (int v = 0; v < 2; ++v) {
        CK(cudaMemset(dst, 0xff, n * out_item));
        CK(cudaMemset(count, 0xff, sizeof(int64_t)));
        if (v == 0) lookback(); else cub_flagged();
        CK(cudaDeviceSynchronize());
        int64_t got_count;
        CK(cudaMemcpy(&got_count, count, sizeof(got_count), cudaMemcpyDeviceToHost));
        bool ok = got_count == kept;
        if (ok && kept > 0) {
            std::vector<char> got(kept * out_item);
            CK(cudaMemcpy(got.data(), dst, got.size(), cudaMemcpyDeviceToHost));
            ok = memcmp(got.data(), itemsize ? (const void *)want_v.data()
                                             : (const void *)want_i.data(), got.size()) == 0;
        }
        Timing t = v == 0 ? timeit(lookback, 40) : timeit(cub_flagged, 40);
        printf("  %9lld %6.3f %-8s %-9s median %8.2f us  min %8.2f us  back-to-back %8.2f us"
               "  %6.0f GB/s (floor %.1f us)%s\n", (long long)n, density, names[v],
               itemsize ? "f32" : "positions", t.med_us, t.min_us, t.b2b_us,
               bytes / t.med_us * 1e-3, bytes / g_copy_rate * 1e6, ok ? "" : "  <-- MISMATCH");
    }
    CK(cudaFree(src));
    CK(cudaFree(flags));
    CK(cudaFree(dst));
    CK(cudaFree(count));
    CK(cudaFree(lb_temp));
    CK(cudaFree(cub_temp));
}

int main()
{
    g_copy_rate = device_copy_rate((size_t)4 << 22);     // 4M floats
    std::mt19937_64 rng(4);
    const int64_t n4m = 2048 * 2048;
    printf("1. float32 values kept where the flag is set\n");
    for (int64_t n : {(int64_t)1000, (int64_t)65536, (int64_t)1 << 20, n4m, 4 * n4m})
        for (double density : n == n4m ? std::vector<double>{0.0, 0.5, 0.999}
                                       : std::vector<double>{0.999})
            compact_case(n, density, 4, rng);
    printf("2. positions of the set flags (int64)\n");
    compact_case(n4m, 0.5, 0, rng);
    return 0;
}
