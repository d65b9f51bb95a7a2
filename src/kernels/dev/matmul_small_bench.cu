// matmul_small_bench.cu -- small real products (issue 24's a @ b of 64 x 64
// float32): the tiled kernel of matmul.cu beside variants that spread a
// small product over more of the GPU, each checked against a CPU reference
// and timed on the GPU back to back (what a loop of small products pays once
// the host's call costs less than the kernel: 5.0 us host, 10.5 us GPU for
// the tiled kernel on the lent H100 at c9d2d54).
//
//   nvcc -O3 -std=c++17 --expt-relaxed-constexpr -arch=sm_90 -Isrc/kernels \
//        -o /tmp/matmul_small_bench src/kernels/dev/matmul_small_bench.cu
//   /tmp/matmul_small_bench
//
// Variants (C row-major, float32, operands C-contiguous here; the library's
// kernels take byte strides, which these keep, so the comparison is fair):
//   tiled   matmul.cu's kernel with 64 x 64 tiles (4 x 4 outputs a thread,
//           16-deep k slabs), as the library launched every product before
//   library matmul.cu's kernel as the library launches it now: 16 x 16
//           tiles, one output a thread, when the 64 x 64 tiles are fewer
//           than the multiprocessors
//   naive   one output a thread, 16 x 16 blocks, k read from global memory
//           through the read-only path (no shared memory, no barriers)
//   tile16  16 x 16 tile a block, one output a thread, the whole k of both
//           operands staged at once when k <= 128 (one barrier)
// Exits non-zero when a variant's output differs from the reference by more
// than the rounding bound of k products.
#include "bench_common.cuh"

#include <cmath>
#include <functional>

#include "../matmul.cu"

namespace {

__global__ void k_naive(ga_matmul_args g)
{
    const int64_t row = (int64_t)blockIdx.y * 16 + threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * 16 + threadIdx.x;
    if (row >= g.m || col >= g.n)
        return;
    float acc = 0.0f;
    const char *pa = g.a + row * g.a_rs, *pb = g.b + col * g.b_cs;
#pragma unroll 8
    for (int64_t k = 0; k < g.k; ++k)
        acc += __ldg((const float *)(pa + k * g.a_cs)) * __ldg((const float *)(pb + k * g.b_rs));
    *(float *)(g.c + row * g.c_rs + col * g.c_cs) = acc;
}

constexpr int T16 = 16, KMAX = 128;

__global__ void k_tile16(ga_matmul_args g)
{
    __shared__ float sa[T16][KMAX + 1], sb[KMAX][T16 + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t row0 = (int64_t)blockIdx.y * T16, col0 = (int64_t)blockIdx.x * T16;
    for (int64_t e = ty * T16 + tx; e < T16 * g.k; e += T16 * T16) {
        const int i = (int)(e / g.k), k = (int)(e % g.k);
        sa[i][k] = row0 + i < g.m ? *(const float *)(g.a + (row0 + i) * g.a_rs + k * g.a_cs)
                                  : 0.0f;
        const int kb = (int)(e / T16), j = (int)(e % T16);
        sb[kb][j] = col0 + j < g.n ? *(const float *)(g.b + kb * g.b_rs + (col0 + j) * g.b_cs)
                                   : 0.0f;
    }
    __syncthreads();
    if (row0 + ty >= g.m || col0 + tx >= g.n)
        return;
    float acc = 0.0f;
    for (int k = 0; k < g.k; ++k)
        acc += sa[ty][k] * sb[k][tx];
    *(float *)(g.c + (row0 + ty) * g.c_rs + (col0 + tx) * g.c_cs) = acc;
}

ga_matmul_args args_for(const float *a, const float *b, float *c, int m, int n, int k)
{
    ga_matmul_args g{};
    g.m = m, g.n = n, g.k = k;
    g.a = (const char *)a, g.b = (const char *)b, g.c = (char *)c;
    g.a_rs = 4 * k, g.a_cs = 4, g.b_rs = 4 * n, g.b_cs = 4, g.c_rs = 4 * n, g.c_cs = 4;
    g.batch.ndim = 1;
    g.batch.shape[0] = 1;
    return g;
}

} // namespace

int main()
{
    int bad = 0, sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int sizes[][3] = {{16, 16, 16}, {32, 32, 32}, {64, 64, 64}, {128, 128, 128},
                            {64, 64, 128}, {128, 128, 32}};
    for (auto &s : sizes) {
        const int m = s[0], n = s[1], k = s[2];
        std::vector<float> ha((size_t)m * k), hb((size_t)k * n), hc((size_t)m * n), ref(hc.size());
        for (size_t i = 0; i < ha.size(); ++i) ha[i] = (float)((i * 7919 % 201) - 100) / 37.0f;
        for (size_t i = 0; i < hb.size(); ++i) hb[i] = (float)((i * 104729 % 199) - 99) / 41.0f;
        std::vector<double> bound(hc.size());
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double acc = 0, mag = 0;
                for (int q = 0; q < k; ++q) {
                    acc += (double)ha[(size_t)i * k + q] * hb[(size_t)q * n + j];
                    mag += std::fabs((double)ha[(size_t)i * k + q] * hb[(size_t)q * n + j]);
                }
                ref[(size_t)i * n + j] = (float)acc;
                bound[(size_t)i * n + j] = (k + 2) * 1.2e-7 * mag;
            }
        float *a, *b, *c;
        CK(cudaMalloc(&a, ha.size() * 4));
        CK(cudaMalloc(&b, hb.size() * 4));
        CK(cudaMalloc(&c, hc.size() * 4));
        CK(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
        const ga_matmul_args g = args_for(a, b, c, m, n, k);
        const dim3 b16(16, 16), g16((n + 15) / 16, (m + 15) / 16);
        struct Variant { const char *name; std::function<void()> run; bool ok; };
        std::vector<Variant> vs = {
            {"tiled", [&] { CK(ga_launch_matmul_tiled(GA_FLOAT32, &g, 0, 0)); }, true},
            {"library", [&] { CK(ga_launch_matmul_tiled(GA_FLOAT32, &g, sms, 0)); }, true},
            {"naive", [&] { k_naive<<<g16, b16>>>(g); }, true},
            {"tile16", [&] { k_tile16<<<g16, b16>>>(g); }, k <= KMAX},
        };
        for (auto &v : vs) {
            if (!v.ok) continue;
            CK(cudaMemset(c, 0xff, hc.size() * 4));
            v.run();
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (size_t i = 0; i < hc.size(); ++i) {
                const double err = std::fabs((double)hc[i] - ref[i]);
                if (!(err <= bound[i] + 1e-30)) worst = std::max(worst, err / bound[i]);
            }
            const Timing t = timeit(v.run, 200);
            printf("%3d x %3d x %3d  %-7s back to back %6.2f us  (flushed median %6.2f, min "
                   "%6.2f)%s\n", m, n, k, v.name, t.b2b_us, t.med_us, t.min_us,
                   worst > 0 ? "  WRONG" : "");
            bad |= worst > 0;
        }
        CK(cudaFree(a));
        CK(cudaFree(b));
        CK(cudaFree(c));
    }
    return bad;
}
