// ew_bench.cu -- the segmentation step where(img > t, 1, 0) on a 2048x2048
// float32 image, kernel by kernel, and the cost of the event pair that
// benchmark() records around every repeat.  Needs a GPU:
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ew_bench src/kernels/dev/ew_bench.cu && /tmp/ew_bench
//
// Versions tried (each checked against a host reference, then timed with
// events, 200 launches back to back (L2 warm, as in a benchmark loop) and
// one launch after an L2 flush (cold); GB/s = bytes read + written / time):
//   greater f32 -> bool   V elements a thread, V = 4 (one 16-byte load, a
//                          4-byte store: ew_kernels.cuh's k_ew_contig), 8, 16
//                          (16-byte store), block 128/256/512, grid covering n
//                          or capped at 4 blocks an SM (grid-stride)
//   where bool -> i64      V = 2 (a 2-byte condition load, one 16-byte store),
//                          4, 8, 16 contiguous elements a thread (a 16-byte
//                          condition load, eight 16-byte stores 64 bytes
//                          apart across a warp), and V = 4, 8, 16 as
//                          interleaved units of U = 2 (ew_clip_where.cu's
//                          k_where_contig: each warp store contiguous), plain
//                          and streaming (st.global.cs) stores
//   fused                  x > t ? 1 : 0 straight to int64 (what a fused
//                          kernel could reach; gpuarr does not fuse)
//   copy                   cudaMemcpyAsync of the same byte counts, the rate
//                          the two kernels are compared with
// and for benchmark(): host time of record(start), record(end), wait(end),
// elapsed() per repeat, waiting by cudaEventSynchronize or by polling
// cudaEventQuery, on the legacy default stream and on a created stream,
// each phase timed on its own; the cost of the host clock.
// Launch cost (host time per launch, 20,000 launches then one sync) of a
// kernel with the contiguous elementwise kernel's arguments: <<<>>> on the
// legacy default stream and on a created stream, cuLaunchKernel through the
// driver entry point, and a real 1000-element float64 add.
// float64 1e7 (sincos_1e7's kernels): sin, cos, sqrt, divide, add with the
// contiguous kernel's layout (two elements, one 16-byte access a thread)
// and with eight elements a thread, against a copy of the same bytes.
#include <cuda.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_common.cuh"

template <class T, int V>
struct alignas(sizeof(T) * V) pack { T v[V]; };

// ------------------------------------------------------------ kernels ---

template <int V>
__global__ void k_greater(int64_t n, const float *__restrict__ x, bool *__restrict__ out, float t)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x * V;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; base < n; base += step) {
        if (base + V <= n) {
            pack<bool, V> po;
#pragma unroll
            for (int j = 0; j < V; j += 4) {
                pack<float, 4> px = *(const pack<float, 4> *)(x + base + j);
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    po.v[j + k] = px.v[k] > t;
            }
            *(pack<bool, V> *)(out + base) = po;
        } else {
            for (int64_t i = base; i < n; ++i)
                out[i] = x[i] > t;
        }
    }
}

template <int V, bool STREAM>
__global__ void k_where(int64_t n, const bool *__restrict__ c, long long *__restrict__ out,
                        long long sx, long long sy)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x * V;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; base < n; base += step) {
        if (base + V <= n) {
            pack<bool, V> pc = *(const pack<bool, V> *)(c + base);
#pragma unroll
            for (int j = 0; j < V; j += 2) {
                longlong2 o;
                o.x = pc.v[j] ? sx : sy;
                o.y = pc.v[j + 1] ? sx : sy;
                if (STREAM)
                    __stcs((longlong2 *)(out + base + j), o);
                else
                    *(longlong2 *)(out + base + j) = o;
            }
        } else {
            for (int64_t i = base; i < n; ++i)
                out[i] = c[i] ? sx : sy;
        }
    }
}

// Interleaved units (ew_clip_where.cu's k_where_contig): V elements a thread as V/U
// units of U, unit j of thread t at unit j * blockDim + t of the block's
// tile, so every store of a warp is contiguous.
template <int V, int U, bool STREAM>
__global__ void k_where_s(int64_t n, const bool *__restrict__ c, long long *__restrict__ out,
                          long long sx, long long sy)
{
    const int64_t tile = (int64_t)blockDim.x * V;
    for (int64_t t0 = (int64_t)blockIdx.x * tile; t0 < n; t0 += (int64_t)gridDim.x * tile) {
        if (t0 + tile <= n) {
#pragma unroll
            for (int j = 0; j < V / U; ++j) {
                int64_t i = t0 + ((int64_t)j * blockDim.x + threadIdx.x) * U;
                pack<bool, U> pc = *(const pack<bool, U> *)(c + i);
#pragma unroll
                for (int k = 0; k < U; k += 2) {
                    longlong2 o;
                    o.x = pc.v[k] ? sx : sy;
                    o.y = pc.v[k + 1] ? sx : sy;
                    if (STREAM)
                        __stcs((longlong2 *)(out + i + k), o);
                    else
                        *(longlong2 *)(out + i + k) = o;
                }
            }
        } else {
            for (int j = 0; j < V / U; ++j)
                for (int64_t i = t0 + ((int64_t)j * blockDim.x + threadIdx.x) * U, e = 0; e < U; ++e)
                    if (i + e < n) out[i + e] = c[i + e] ? sx : sy;
        }
    }
}

template <int V>
__global__ void k_fused(int64_t n, const float *__restrict__ x, long long *__restrict__ out,
                        float t, long long sx, long long sy)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x * V;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; base < n; base += step) {
        pack<float, V> px = *(const pack<float, V> *)(x + base);
#pragma unroll
        for (int j = 0; j < V; j += 2) {
            longlong2 o;
            o.x = px.v[j] > t ? sx : sy;
            o.y = px.v[j + 1] > t ? sx : sy;
            *(longlong2 *)(out + base + j) = o;
        }
    }
}

__global__ void k_flush(int64_t n, int *buf)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        buf[i] += 1;
}

// ------------------------------------------------------------ harness ---

static const int64_t N = 2048 * 2048;
static int sms;
static int *flushbuf;
static const int64_t FLUSH_N = 64 << 20;  // 256 MB of int: far past the 50 MB L2

static unsigned grid_for(int64_t n, int v, int block, bool capped)
{
    int64_t blocks = (n / v + block - 1) / block;
    int64_t cap = capped ? (int64_t)sms * 4 : (1 << 16);
    if (blocks > cap) blocks = cap;
    return (unsigned)(blocks < 1 ? 1 : blocks);
}

// Median-free, simple: the mean over `reps` back-to-back launches (warm),
// and the minimum over 20 single launches each after an L2 flush (cold).
template <class F>
static void timeit(const char *name, double bytes, F launch)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 10; ++i) launch();
    const int reps = 200;
    CK(cudaEventRecord(a));
    for (int i = 0; i < reps; ++i) launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    double warm = ms * 1e3 / reps;
    double cold = 1e30;
    for (int i = 0; i < 20; ++i) {
        k_flush<<<sms * 8, 256>>>(FLUSH_N, flushbuf);
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms, a, b));
        if (ms * 1e3 < cold) cold = ms * 1e3;
    }
    CK(cudaGetLastError());
    printf("%-44s warm %7.2f us %6.0f GB/s | cold %7.2f us %6.0f GB/s\n", name, warm,
           bytes / warm * 1e-3, cold, bytes / cold * 1e-3);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
}

static void check_bool(const char *name, const bool *d, const std::vector<float> &h, float t)
{
    std::vector<unsigned char> got(N);
    CK(cudaMemcpy(got.data(), d, N, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < N; ++i)
        if ((got[i] != 0) != (h[i] > t)) {
            printf("MISMATCH %s at %lld\n", name, (long long)i);
            exit(1);
        }
}

static void check_i64(const char *name, const long long *d, const std::vector<float> &h, float t)
{
    std::vector<long long> got(N);
    CK(cudaMemcpy(got.data(), d, N * 8, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < N; ++i)
        if (got[i] != (h[i] > t ? 1 : 0)) {
            printf("MISMATCH %s at %lld\n", name, (long long)i);
            exit(1);
        }
}

template <int V>
static void run_greater(const float *x, bool *c, const std::vector<float> &h, float t, int block,
                        bool capped)
{
    char name[96];
    snprintf(name, sizeof name, "greater f32->bool V=%d block=%d %s", V, block,
             capped ? "grid-stride" : "full grid");
    unsigned g = grid_for(N, V, block, capped);
    CK(cudaMemset(c, 2, N));
    k_greater<V><<<g, block>>>(N, x, c, t);
    check_bool(name, c, h, t);
    timeit(name, N * 5.0, [&] { k_greater<V><<<g, block>>>(N, x, c, t); });
}

template <int V, bool S>
static void run_where(const bool *c, long long *o, const std::vector<float> &h, float t, int block,
                      bool capped)
{
    char name[96];
    snprintf(name, sizeof name, "where bool->i64 V=%d block=%d %s%s", V, block,
             capped ? "grid-stride" : "full grid", S ? " st.cs" : "");
    unsigned g = grid_for(N, V, block, capped);
    CK(cudaMemset(o, 0x55, N * 8));
    k_where<V, S><<<g, block>>>(N, c, o, 1, 0);
    check_i64(name, o, h, t);
    timeit(name, N * 9.0, [&] { k_where<V, S><<<g, block>>>(N, c, o, 1, 0); });
}

template <int V, int U, bool S>
static void run_where_s(const bool *c, long long *o, const std::vector<float> &h, float t, int block)
{
    char name[96];
    snprintf(name, sizeof name, "where bool->i64 interleaved V=%d U=%d block=%d%s", V, U, block,
             S ? " st.cs" : "");
    unsigned g = grid_for(N, V, block, false);
    CK(cudaMemset(o, 0x55, N * 8));
    k_where_s<V, U, S><<<g, block>>>(N, c, o, 1, 0);
    check_i64(name, o, h, t);
    timeit(name, N * 9.0, [&] { k_where_s<V, U, S><<<g, block>>>(N, c, o, 1, 0); });
}

// Host time per benchmark() repeat on a no-op: record, record, wait, elapsed.
static void bench_overhead(cudaStream_t s, const char *sname, bool poll, unsigned flags)
{
    cudaEvent_t a, b;
    CK(cudaEventCreateWithFlags(&a, flags));
    CK(cudaEventCreateWithFlags(&b, flags));
    const int reps = 5000;
    double best = 1e30;
    for (int trial = 0; trial < 5; ++trial) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i) {
            CK(cudaEventRecord(a, s));
            CK(cudaEventRecord(b, s));
            if (poll) {
                cudaError_t e;
                while ((e = cudaEventQuery(b)) == cudaErrorNotReady) {}
                CK(e);
            } else {
                CK(cudaEventSynchronize(b));
            }
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
        }
        double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
        if (us < best) best = us;
    }
    printf("benchmark repeat (no-op) %-8s %-22s events %s: %.2f us\n", sname,
           poll ? "poll cudaEventQuery" : "cudaEventSynchronize",
           flags == cudaEventDefault ? "default" : "blocking-sync", best);
    // The parts, on the same events.
    const int n = 20000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) CK(cudaEventRecord(a, s));
    double rec = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
    CK(cudaEventSynchronize(a));
    float ms;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) CK(cudaEventElapsedTime(&ms, a, a));
    double el = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
    printf("    parts: cudaEventRecord %.2f us, cudaEventElapsedTime %.2f us\n", rec, el);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
}

// ------------------------------------------------------------ launch cost ---

__global__ void k_empty(int64_t n, const double *a, const double *b, const double *c, double *o,
                        double sa, double sb, double sc, int mask, int vec)
{
    if (n < 0 && threadIdx.x == 0) o[0] = a[0] + b[0] + c[0] + sa + sb + sc + mask + vec;
}

__global__ void k_add1000(int64_t n, const double *__restrict__ a, const double *__restrict__ b,
                          const double *__restrict__ c, double *__restrict__ o, double sa,
                          double sb, double sc, int mask, int vec)
{
    int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 2;
    if (i + 2 <= n) {
        double2 x = *(const double2 *)(a + i), y = *(const double2 *)(b + i);
        *(double2 *)(o + i) = make_double2(x.x + y.x, x.y + y.y);
    }
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
}

typedef CUresult (*cuLaunchKernel_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void **, void **);

static void launch_cost(double *a, double *b, double *o)
{
    const int n = 20000;
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    int64_t len = 1000;
    double sa = 0, sb = 0, sc = 0;
    int mask = 0, vec = 1;
    auto run = [&](const char *name, auto launch, cudaStream_t s) {
        for (int i = 0; i < 100; ++i) launch();
        CK(cudaStreamSynchronize(s));
        double best = 1e30;
        for (int t = 0; t < 5; ++t) {
            double t0 = now_us();
            for (int i = 0; i < n; ++i) launch();
            double t1 = now_us();
            CK(cudaStreamSynchronize(s));
            if ((t1 - t0) / n < best) best = (t1 - t0) / n;
        }
        CK(cudaGetLastError());
        printf("launch %-52s %.3f us per launch (host)\n", name, best);
    };
    run("<<<>>> empty kernel, legacy stream", [&] {
        k_empty<<<1, 256>>>(len, a, b, a, o, sa, sb, sc, mask, vec); }, 0);
    run("<<<>>> empty kernel, created non-blocking stream", [&] {
        k_empty<<<1, 256, 0, st>>>(len, a, b, a, o, sa, sb, sc, mask, vec); }, st);
    run("<<<>>> add 1000 f64 (2 a thread), legacy stream", [&] {
        k_add1000<<<2, 256>>>(len, a, b, a, o, sa, sb, sc, mask, vec); }, 0);
    void *args[] = {&len, &a, &b, &a, &o, &sa, &sb, &sc, &mask, &vec};
    run("cudaLaunchKernel add 1000 f64, legacy stream", [&] {
        CK(cudaLaunchKernel((const void *)k_add1000, dim3(2), dim3(256), args, 0, 0)); }, 0);
    cudaFunction_t fn;
    void *entry = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetFuncBySymbol(&fn, (const void *)k_add1000));
    CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &q));
    if (entry == nullptr || q != cudaDriverEntryPointSuccess) {
        printf("no cuLaunchKernel entry point\n");
    } else {
        cuLaunchKernel_t lk = (cuLaunchKernel_t)entry;
        run("cuLaunchKernel (driver entry) add 1000 f64, legacy stream", [&] {
            if (lk((CUfunction)fn, 2, 1, 1, 256, 1, 1, 0, 0, args, nullptr) != CUDA_SUCCESS) exit(1); }, 0);
        run("cuLaunchKernel (driver entry) add 1000 f64, created stream", [&] {
            if (lk((CUfunction)fn, 2, 1, 1, 256, 1, 1, 0, (CUstream)st, args, nullptr) != CUDA_SUCCESS) exit(1); }, st);
    }
    {   // a launch and its wait, one at a time: the round trip
        double best = 1e30;
        for (int t = 0; t < 5; ++t) {
            double t0 = now_us();
            for (int i = 0; i < 2000; ++i) {
                k_empty<<<1, 256>>>(len, a, b, a, o, sa, sb, sc, mask, vec);
                CK(cudaStreamSynchronize(0));
            }
            double us = (now_us() - t0) / 2000;
            if (us < best) best = us;
        }
        printf("launch + cudaStreamSynchronize (round trip), legacy stream: %.3f us\n", best);
    }
    CK(cudaStreamDestroy(st));
}

// ------------------------------------------------- benchmark() phases ---

// One benchmark() repeat on a no-op, phase by phase (mean us over 5000).
static void bench_phases(cudaStream_t s, const char *sname, int wait_mode, bool elapsed)
{
    static const char *modes[] = {"cudaEventSynchronize", "poll cudaEventQuery",
                                  "poll 20 us then sync", "only end event + sync"};
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const int reps = 5000;
    double ph[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < 200; ++i) {
        CK(cudaEventRecord(a, s));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
    }
    double t_start = now_us();
    for (int i = 0; i < reps; ++i) {
        double t0 = now_us();
        if (wait_mode != 3) CK(cudaEventRecord(a, s));
        double t1 = now_us();
        CK(cudaEventRecord(b, s));
        double t2 = now_us();
        if (wait_mode == 0 || wait_mode == 3) {
            CK(cudaEventSynchronize(b));
        } else {
            cudaError_t e;
            double lim = t2 + 20;
            while ((e = cudaEventQuery(b)) == cudaErrorNotReady)
                if (wait_mode == 2 && now_us() > lim) { e = cudaEventSynchronize(b); break; }
            CK(e);
        }
        double t3 = now_us();
        if (elapsed && wait_mode != 3) {
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
        }
        double t4 = now_us();
        ph[0] += t1 - t0; ph[1] += t2 - t1; ph[2] += t3 - t2; ph[3] += t4 - t3;
    }
    double total = (now_us() - t_start) / reps;
    printf("bench repeat %-8s %-24s%s: %.2f us = record %.2f + record %.2f + wait %.2f + elapsed %.2f (+ clock reads)\n",
           sname, modes[wait_mode], elapsed ? "" : " (no elapsed)", total, ph[0] / reps,
           ph[1] / reps, ph[2] / reps, ph[3] / reps);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
}

static void clock_cost()
{
    const int n = 1000000;
    struct timespec ts;
    auto t0 = std::chrono::steady_clock::now();
    long long sink = 0;
    for (int i = 0; i < n; ++i) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += ts.tv_nsec;
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns per call (%lld)\n", us * 1e3 / n, sink & 1);
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    char buf[64] = "?";
    if (f) { if (!fgets(buf, sizeof buf, f)) buf[0] = 0; fclose(f); }
    printf("clocksource: %s", buf);
}

// ------------------------------------------------------- float64 1e7 ---

template <int V, int OP>
__global__ void k_f64(int64_t n, const double *__restrict__ x, const double *__restrict__ y,
                      double *__restrict__ o)
{
    int64_t step = (int64_t)gridDim.x * blockDim.x * V;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; base < n; base += step) {
        if (base + V <= n) {
            double a[V], b[V], r[V];
#pragma unroll
            for (int j = 0; j < V; j += 2) {
                double2 p = *(const double2 *)(x + base + j);
                a[j] = p.x; a[j + 1] = p.y;
                if (OP >= 3) {
                    double2 q = *(const double2 *)(y + base + j);
                    b[j] = q.x; b[j + 1] = q.y;
                }
            }
#pragma unroll
            for (int k = 0; k < V; ++k)
                r[k] = OP == 0 ? sin(a[k]) : OP == 1 ? cos(a[k]) : OP == 2 ? sqrt(a[k])
                     : OP == 3 ? a[k] / b[k] : a[k] + b[k];
#pragma unroll
            for (int j = 0; j < V; j += 2)
                *(double2 *)(o + base + j) = make_double2(r[j], r[j + 1]);
        }
    }
}

static void f64_kernels()
{
    const int64_t n = 10000000;
    double *x, *y, *o;
    CK(cudaMalloc(&x, n * 8));
    CK(cudaMalloc(&y, n * 8));
    CK(cudaMalloc(&o, n * 8));
    std::vector<double> h(n);
    for (int64_t i = 0; i < n; ++i) h[i] = 0.5 + (double)((i * 2654435761u) % 1000003) / 1000003.0;
    CK(cudaMemcpy(x, h.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, h.data(), n * 8, cudaMemcpyHostToDevice));
    timeit("f64 1e7 copy 160 MB (80 read + 80 written)", n * 16.0,
           [&] { CK(cudaMemcpyAsync(o, x, n * 8, cudaMemcpyDeviceToDevice)); });
    static const char *names[] = {"sin", "cos", "sqrt", "divide", "add"};
    auto one = [&](auto k, int op, int v) {
        char name[96];
        snprintf(name, sizeof name, "f64 1e7 %s V=%d", names[op], v);
        unsigned g = grid_for(n, v, 256, false);
        timeit(name, n * (op >= 3 ? 24.0 : 16.0), [&] { k<<<g, 256>>>(n, x, y, o); });
    };
    one(k_f64<2, 0>, 0, 2); one(k_f64<8, 0>, 0, 8);
    one(k_f64<2, 1>, 1, 2); one(k_f64<8, 1>, 1, 8);
    one(k_f64<2, 2>, 2, 2);
    one(k_f64<2, 3>, 3, 2); one(k_f64<8, 3>, 3, 8);
    one(k_f64<2, 4>, 4, 2);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(o));
}

int main()
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    printf("device %s, %d SMs, L2 %d MB\n", p.name, sms, p.l2CacheSize >> 20);

    std::vector<float> h(N);
    uint64_t s = 88172645463325252ull;
    for (int64_t i = 0; i < N; ++i) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        h[i] = (float)((s >> 11) * (1.0 / 9007199254740992.0)) - 0.5f;
    }
    const float t = 0.25f;
    float *x;
    bool *c;
    long long *o;
    char *cp;
    CK(cudaMalloc(&x, N * 4));
    CK(cudaMalloc(&c, N));
    CK(cudaMalloc(&o, N * 8));
    CK(cudaMalloc(&cp, N * 16));
    CK(cudaMalloc(&flushbuf, FLUSH_N * 4));
    CK(cudaMemset(flushbuf, 0, FLUSH_N * 4));
    CK(cudaMemcpy(x, h.data(), N * 4, cudaMemcpyHostToDevice));

    timeit("copy 20 MB (16 MB read + 4 MB written)", N * 5.0,
           [&] { CK(cudaMemcpyAsync(cp, x, N * 5 / 2, cudaMemcpyDeviceToDevice)); });
    timeit("copy 36 MB (4 MB read + 32 MB written)", N * 9.0,
           [&] { CK(cudaMemcpyAsync(cp + N * 8, cp, N * 9 / 2, cudaMemcpyDeviceToDevice)); });
    timeit("copy 48 MB", N * 12.0,
           [&] { CK(cudaMemcpyAsync(cp + N * 8, cp, N * 6, cudaMemcpyDeviceToDevice)); });

    for (int block : {128, 256, 512}) {
        run_greater<4>(x, c, h, t, block, false);
        run_greater<8>(x, c, h, t, block, false);
        run_greater<16>(x, c, h, t, block, false);
    }
    run_greater<4>(x, c, h, t, 256, true);
    run_greater<16>(x, c, h, t, 256, true);

    k_greater<4><<<grid_for(N, 4, 256, false), 256>>>(N, x, c, t);
    for (int block : {128, 256, 512}) {
        run_where<2, false>(c, o, h, t, block, false);
        run_where<4, false>(c, o, h, t, block, false);
        run_where<8, false>(c, o, h, t, block, false);
        run_where<16, false>(c, o, h, t, block, false);
    }
    for (int block : {128, 256, 512}) {
        run_where_s<4, 2, false>(c, o, h, t, block);
        run_where_s<8, 2, false>(c, o, h, t, block);
        run_where_s<16, 2, false>(c, o, h, t, block);
    }
    run_where_s<8, 2, true>(c, o, h, t, 256);
    run_where_s<16, 4, false>(c, o, h, t, 256);
    run_where<2, true>(c, o, h, t, 256, false);
    run_where<16, true>(c, o, h, t, 256, false);
    run_where<2, false>(c, o, h, t, 256, true);
    run_where<16, false>(c, o, h, t, 256, true);

    {
        unsigned g = grid_for(N, 4, 256, false);
        CK(cudaMemset(o, 0x55, N * 8));
        k_fused<4><<<g, 256>>>(N, x, o, t, 1, 0);
        check_i64("fused", o, h, t);
        timeit("fused f32 -> i64 (x > t ? 1 : 0) V=4", N * 12.0,
               [&] { k_fused<4><<<g, 256>>>(N, x, o, t, 1, 0); });
    }
    timeit("pair: greater V=4 + where V=2 (as now)", N * 14.0, [&] {
        k_greater<4><<<grid_for(N, 4, 256, false), 256>>>(N, x, c, t);
        k_where<2, false><<<grid_for(N, 2, 256, false), 256>>>(N, c, o, 1, 0);
    });
    timeit("pair: greater V=16 + where V=16", N * 14.0, [&] {
        k_greater<16><<<grid_for(N, 16, 256, false), 256>>>(N, x, c, t);
        k_where<16, false><<<grid_for(N, 16, 256, false), 256>>>(N, c, o, 1, 0);
    });
    timeit("pair: greater V=16 + where interleaved V=8 U=2 (gpuarr)", N * 14.0, [&] {
        k_greater<16><<<grid_for(N, 16, 256, false), 256>>>(N, x, c, t);
        k_where_s<8, 2, false><<<grid_for(N, 8, 256, false), 256>>>(N, c, o, 1, 0);
    });

    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (unsigned flags : {(unsigned)cudaEventDefault, (unsigned)cudaEventBlockingSync}) {
        bench_overhead(0, "legacy", false, flags);
        bench_overhead(0, "legacy", true, flags);
    }
    bench_overhead(st, "created", false, cudaEventDefault);
    bench_overhead(st, "created", true, cudaEventDefault);
    for (int mode = 0; mode < 4; ++mode)
        bench_phases(0, "legacy", mode, true);
    bench_phases(0, "legacy", 1, false);
    bench_phases(st, "created", 0, true);
    bench_phases(st, "created", 1, true);
    CK(cudaStreamDestroy(st));
    clock_cost();
    launch_cost((double *)x, (double *)x + 1024, (double *)cp);
    f64_kernels();
    printf("ok\n");
    return 0;
}
