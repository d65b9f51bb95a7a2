"""RawKernel and RawModule on the GPU: the lesson's kernel episodes (vector
add, histogram in global and shared memory, the constant-memory table,
two streams with events), argument typing, templates, attributes and the
launch checks.  Compile-only tests and the kernel cache are in
test_compiler.py (they need no GPU)."""
import numpy as np
import pytest

import gpuarr as gp

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("private_kernel_cache")]

VECTOR_ADD = r'''
extern "C"
__global__ void vector_add(const float * A, const float * B, float * C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    if ( item < size ) { C[item] = A[item] + B[item]; }
}
'''

HISTOGRAM_GLOBAL = r'''
extern "C"
__global__ void histogram(const int * input, int * output)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    atomicAdd(&(output[input[item]]), 1);
}
'''

HISTOGRAM_SHARED = r'''
extern "C"
__global__ void histogram(const int * input, int * output)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    __shared__ int temp_histogram[256];
    temp_histogram[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&(temp_histogram[input[item]]), 1);
    __syncthreads();
    atomicAdd(&(output[threadIdx.x]), temp_histogram[threadIdx.x]);
}
'''

CONSTANT_MEMORY = r'''
extern "C" {
#define BLOCKS 2
__constant__ float factors[BLOCKS];

__global__ void sum_and_multiply(const float * A, const float * B, float * C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    C[item] = (A[item] + B[item]) * factors[blockIdx.x];
}
}
'''




def test_lesson_vector_add(rng):
    size = 1024
    a = gp.asarray(rng.random(size, dtype=np.float32))
    b = gp.asarray(rng.random(size, dtype=np.float32))
    c = gp.zeros(size, dtype=gp.float32)
    vector_add_gpu = gp.RawKernel(VECTOR_ADD, "vector_add")
    vector_add_gpu((2, 1, 1), (size // 2, 1, 1), (a, b, c, size))
    np.testing.assert_array_equal(c.get(), a.get() + b.get())


def test_vector_add_bounds_and_int32_size(rng):
    size = 1000                      # not a multiple of the block: the bound matters
    a = gp.asarray(rng.random(size, dtype=np.float32))
    b = gp.asarray(rng.random(size, dtype=np.float32))
    c = gp.full(size + 24, -1.0, dtype=gp.float32)
    k = gp.RawKernel(VECTOR_ADD, "vector_add")
    k(((size + 255) // 256,), (256,), (a, b, c, np.int32(size)))
    got = c.get()
    np.testing.assert_array_equal(got[:size], a.get() + b.get())
    assert (got[size:] == -1).all()


@pytest.mark.parametrize("code", [HISTOGRAM_GLOBAL, HISTOGRAM_SHARED], ids=["global", "shared"])
def test_lesson_histogram(code, rng):
    size = 2 ** 20
    host = rng.integers(0, 256, size=size, dtype=np.int32)
    out = gp.zeros(256, dtype=gp.int32)
    k = gp.RawKernel(code, "histogram")
    k((size // 256,), (256,), (gp.asarray(host), out))
    np.testing.assert_array_equal(out.get(), np.bincount(host, minlength=256))


def test_lesson_constant_memory_through_get_global(rng):
    size = 512
    module = gp.RawModule(code=CONSTANT_MEMORY)
    sum_and_multiply = module.get_function("sum_and_multiply")
    factors_ptr = module.get_global("factors")
    factors_gpu = gp.ndarray(2, gp.float32, factors_ptr)
    factors = rng.random(2, dtype=np.float32) + 0.5
    factors_gpu[...] = gp.asarray(factors)
    a = gp.asarray(rng.random(size, dtype=np.float32))
    b = gp.asarray(rng.random(size, dtype=np.float32))
    c = gp.zeros(size, dtype=gp.float32)
    sum_and_multiply((2, 1, 1), (size // 2, 1, 1), (a, b, c, size))
    expected = (a.get() + b.get()) * np.repeat(factors, size // 2)
    np.testing.assert_allclose(c.get(), expected, rtol=1e-6)
    # The table written from host values and from a scalar, then read back.
    factors_gpu[...] = np.array([3.0, 5.0], np.float32)
    np.testing.assert_array_equal(factors_gpu.get(), [3.0, 5.0])
    factors_gpu[1] = 7
    sum_and_multiply((2,), (size // 2,), (a, b, c, size))
    np.testing.assert_allclose(c.get(), (a.get() + b.get()) * np.repeat([3.0, 7.0], size // 2),
                               rtol=1e-6)


def test_unowned_memory_assignment_from_host(rng):
    """An array over foreign device memory (a module's __constant__ symbol
    wrapped by hand) takes host values, device values and scalars."""
    module = gp.RawModule(code=CONSTANT_MEMORY)
    mp = module.get_global("factors")
    um = gp.cuda.UnownedMemory(mp.ptr, 8, module)
    table = gp.ndarray((2,), gp.float32, memptr=gp.cuda.MemoryPointer(um, mp.ptr))
    table[...] = np.array([1.5, 2.5], np.float32)
    np.testing.assert_array_equal(table.get(), [1.5, 2.5])
    table[...] = gp.asarray(np.array([4.0, 8.0], np.float32))
    np.testing.assert_array_equal(table.get(), [4.0, 8.0])
    table[:] = 2
    np.testing.assert_array_equal(table.get(), [2.0, 2.0])


def test_two_kernels_on_two_streams_with_events(rng):
    size = 2 ** 22
    k = gp.RawKernel(VECTOR_ADD, "vector_add")
    a = gp.asarray(rng.random(size, dtype=np.float32))
    b = gp.asarray(rng.random(size, dtype=np.float32))
    c1 = gp.zeros(size, dtype=gp.float32)
    c2 = gp.zeros(size, dtype=gp.float32)
    s1, s2 = gp.cuda.Stream(non_blocking=True), gp.cuda.Stream(non_blocking=True)
    # the inputs were written on the legacy default stream, with which
    # non-blocking streams do not synchronise: wait for them first
    gp.cuda.Stream.null.synchronize()
    start, end = gp.cuda.Event(), gp.cuda.Event()
    start.record(s1)
    grid = (size + 1023) // 1024
    k((grid,), (1024,), (a, b, c1, size), stream=s1)
    e1 = s1.record()
    with s2:
        s2.wait_event(e1)                       # c2 = c1 + b, after c1 is written
        k((grid,), (1024,), (c1, b, c2, size))
    end.record(s2)
    end.synchronize()
    assert gp.cuda.get_elapsed_time(start, end) > 0
    np.testing.assert_allclose(c2.get(), a.get() + 2 * b.get(), rtol=1e-6)


SCALARS = r'''
extern "C" __global__ void scalars(bool b, signed char i8, short i16, int i32,
        long long i64, unsigned long long u64, float f32, double f64, double re, double im,
        float c64re, float c64im, double *out)
{
    out[0] = b; out[1] = i8; out[2] = i16; out[3] = i32; out[4] = (double)i64;
    out[5] = (double)u64; out[6] = f32; out[7] = f64; out[8] = re; out[9] = im;
    out[10] = c64re; out[11] = c64im;
}
'''

COMPLEX_ARGS = r'''
#include <cuComplex.h>
extern "C" __global__ void cplx(cuDoubleComplex z, cuFloatComplex w, double *out)
{
    out[0] = cuCreal(z); out[1] = cuCimag(z); out[2] = cuCrealf(w); out[3] = cuCimagf(w);
}
'''


def test_argument_typing():
    out = gp.zeros(12, dtype=gp.float64)
    k = gp.RawKernel(SCALARS, "scalars")
    k((1,), (1,), (True, np.int8(-5), np.int16(-300), np.int32(-70000), -2 ** 40, 2 ** 63 + 2048,
                   np.float32(1.5), 2.25, 3.5, -4.5, 0.0, 0.0, out))
    got = out.get()
    assert got[0] == 1 and got[1] == -5 and got[2] == -300 and got[3] == -70000
    assert got[4] == -2 ** 40 and got[5] == float(2 ** 63 + 2048)
    assert got[6] == 1.5 and got[7] == 2.25


def test_complex_arguments_with_translate_cucomplex():
    out = gp.zeros(4, dtype=gp.float64)
    k = gp.RawKernel(COMPLEX_ARGS, "cplx", translate_cucomplex=True)
    k((1,), (1,), (1.25 - 2.5j, np.complex64(3 + 4j), out))
    np.testing.assert_array_equal(out.get(), [1.25, -2.5, 3.0, 4.0])


def test_none_passes_null():
    code = r'''extern "C" __global__ void isnull(const float *p, int *out) { out[0] = p == 0; }'''
    out = gp.zeros(1, dtype=gp.int32)
    gp.RawKernel(code, "isnull")((1,), (1,), (None, out))
    assert int(out.get()[0]) == 1


def test_foreign_device_arrays_pass_their_pointer():
    """Objects with __cuda_array_interface__ (here a plain exporter over a
    gpuarr array's memory) pass their device pointer."""
    base = gp.arange(8, dtype=gp.float32)

    class Exporter:
        __cuda_array_interface__ = base.__cuda_array_interface__

    code = r'''extern "C" __global__ void twice(float *x) { x[threadIdx.x] *= 2; }'''
    gp.RawKernel(code, "twice")((1,), (8,), (Exporter(),))
    np.testing.assert_array_equal(base.get(), 2 * np.arange(8, dtype=np.float32))


def test_bad_arguments_raise_before_launch():
    k = gp.RawKernel(VECTOR_ADD, "vector_add")
    a = gp.zeros(4, dtype=gp.float32)
    with pytest.raises(TypeError, match="numpy.ndarray.*gpuarr.asarray"):
        k((1,), (4,), (a, np.zeros(4, np.float32), a, 4))
    with pytest.raises(TypeError, match="argument 3 of type str"):
        k((1,), (4,), (a, a, a, "4"))
    with pytest.raises(OverflowError, match="64 bits"):
        k((1,), (4,), (a, a, a, 2 ** 64))
    with pytest.raises(TypeError, match="args must be a tuple"):
        k((1,), (4,), a)
    with pytest.raises(ValueError, match="each dimension must be at least 1"):
        k((0,), (4,), (a, a, a, 4))
    with pytest.raises(ValueError, match="1 to 3"):
        k((1, 1, 1, 1), (4,), (a, a, a, 4))


def test_launch_limits_named():
    k = gp.RawKernel(VECTOR_ADD, "vector_add")
    a = gp.zeros(4, dtype=gp.float32)
    with pytest.raises(ValueError, match="max_threads_per_block is 1024"):
        k((1,), (1024, 2), (a, a, a, 4))
    with pytest.raises(ValueError, match="block.x is 2048, over this device's limit of 1024"):
        k((1,), (2048,), (a, a, a, 4))
    with pytest.raises(ValueError, match="block.z is 128, over this device's limit of 64"):
        k((1,), (1, 1, 128), (a, a, a, 4))
    with pytest.raises(ValueError, match="grid.y is 70000, over this device's limit of 65535"):
        k((1, 70000), (1,), (a, a, a, 4))
    with pytest.raises(ValueError, match="dynamic shared memory"):
        k((1,), (4,), (a, a, a, 4), shared_mem=200 * 1024)


def test_dynamic_shared_memory_opt_in(rng):
    code = r'''
    extern "C" __global__ void rev(const float *x, float *y, int n) {
        extern __shared__ float buf[];
        for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = x[i];
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = buf[n - 1 - i];
    }'''
    n = 20000                             # 80 KB: over the default 48 KB
    k = gp.RawKernel(code, "rev")
    x = gp.asarray(rng.random(n, dtype=np.float32))
    y = gp.zeros(n, dtype=gp.float32)
    with pytest.raises(ValueError, match="max_dynamic_shared_size_bytes"):
        k((1,), (256,), (x, y, n), shared_mem=4 * n)
    k.max_dynamic_shared_size_bytes = 4 * n
    assert k.max_dynamic_shared_size_bytes == 4 * n
    k((1,), (256,), (x, y, n), shared_mem=4 * n)
    np.testing.assert_array_equal(y.get(), x.get()[::-1])
    with pytest.raises(ValueError, match="must be between 0 and"):
        k.max_dynamic_shared_size_bytes = 10 ** 9
    k.preferred_shared_memory_carveout = 50
    assert k.preferred_shared_memory_carveout in (50, -1) or k.preferred_shared_memory_carveout >= 0


def test_attributes():
    k = gp.RawKernel(VECTOR_ADD, "vector_add")
    attrs = k.attributes
    for key in ("max_threads_per_block", "num_regs", "shared_size_bytes", "const_size_bytes",
                "local_size_bytes", "ptx_version", "binary_version"):
        assert key in attrs and getattr(k, key) == attrs[key]
    assert k.max_threads_per_block == 1024
    assert 0 < k.num_regs < 64
    cc = int(gp.cuda.Device().compute_capability)
    assert k.binary_version == cc
    k.compile()


def test_templates_through_name_expressions(rng):
    code = r'''
    template <typename T>
    __global__ void scale(T *x, T f, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= f;
    }'''
    mod = gp.RawModule(code=code, name_expressions=("scale<float>", "scale<double>"))
    for dtype, name, f in ((np.float32, "scale<float>", np.float32(3)),
                           (np.float64, "scale<double>", 3.0)):
        host = rng.random(100).astype(dtype)
        x = gp.asarray(host)
        mod.get_function(name)((1,), (128,), (x, f, 100))
        np.testing.assert_allclose(x.get(), host * 3, rtol=1e-6)
    with pytest.raises(ValueError, match="name_expressions"):
        mod.get_function("scale<int>")


def test_missing_kernel_and_global_names():
    mod = gp.RawModule(code=CONSTANT_MEMORY)
    with pytest.raises(AttributeError, match="no kernel named 'nope'"):
        mod.get_function("nope")
    with pytest.raises(AttributeError, match="no __device__ or __constant__ variable named"):
        mod.get_global("nope")
    k = gp.RawKernel(VECTOR_ADD, "not_there")
    with pytest.raises(AttributeError, match="no kernel named 'not_there'"):
        k((1,), (1,), ())


def test_compile_error_is_readable():
    k = gp.RawKernel('extern "C" __global__ void f(float *x)\n{\n    x[0] = oops;\n}\n', "f")
    with pytest.raises(gp.cuda.CompileException) as info:
        k((1,), (1,), (None,))
    text = str(info.value)
    assert "identifier \"oops\" is undefined" in text
    assert ">    3 |     x[0] = oops;" in text


def test_module_from_cubin_and_ptx_files(tmp_path, rng):
    from gpuarr.cuda import compiler
    cc = int(gp.cuda.Device().compute_capability)
    cubin = compiler.compile_code(VECTOR_ADD, arch=cc)
    path = tmp_path / "vadd.cubin"
    path.write_bytes(cubin.data)
    ptx = compiler._raw_compile(VECTOR_ADD, "v.cu", (f"-arch=compute_{cc}",), (), "ptx")[0]
    ptx_path = tmp_path / "vadd.ptx"
    ptx_path.write_bytes(ptx)
    for p in (path, ptx_path):
        k = gp.RawModule(path=str(p)).get_function("vector_add")
        a = gp.asarray(rng.random(64, dtype=np.float32))
        c = gp.zeros(64, dtype=gp.float32)
        k((1,), (64,), (a, a, c, 64))
        np.testing.assert_array_equal(c.get(), 2 * a.get())


def test_cuda_stream_protocol_both_ways():
    s = gp.cuda.Stream()
    version, handle = s.__cuda_stream__()
    assert version == 0 and handle == s.ptr

    class Foreign:
        def __cuda_stream__(self):
            return (0, s.ptr)

    wrapped = gp.cuda.Stream(ptr=Foreign())
    assert wrapped.ptr == s.ptr
    a = gp.zeros(256, dtype=gp.float32)
    k = gp.RawKernel(VECTOR_ADD, "vector_add")
    k((1,), (256,), (a, a, a, 256), stream=Foreign())
    s.synchronize()
    with pytest.raises(TypeError, match="__cuda_stream__"):
        k((1,), (256,), (a, a, a, 256), stream=object())


def test_cuda_core_launch_with_gpuarr_arrays(rng):
    core = pytest.importorskip("cuda.core")
    dev = core.Device()
    dev.set_current()
    stream = dev.create_stream(gp.cuda.Stream())      # a gpuarr stream through the protocol
    opts = core.ProgramOptions(arch=f"sm_{dev.arch}")
    kernel = core.Program(VECTOR_ADD, code_type="c++", options=opts).compile(
        "cubin").get_kernel("vector_add")
    size = 1024
    a = gp.asarray(rng.random(size, dtype=np.float32))
    b = gp.asarray(rng.random(size, dtype=np.float32))
    c = gp.zeros(size, dtype=gp.float32)
    config = core.LaunchConfig(grid=size // 256, block=256)
    core.launch(stream, config, kernel, a.data.ptr, b.data.ptr, c.data.ptr, np.int32(size))
    stream.sync()
    np.testing.assert_array_equal(c.get(), a.get() + b.get())
    with gp.cuda.Stream(ptr=stream):          # and a cuda.core stream as gpuarr's
        d = a + b
    np.testing.assert_array_equal(d.get(), a.get() + b.get())


def test_cooperative_groups_grid_sync(rng):
    code = r'''
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    extern "C" __global__ void two_phase(int *x, int *out, int n) {
        cg::grid_group g = cg::this_grid();
        int i = g.thread_rank();
        if (i < n) x[i] = i;
        g.sync();
        if (i < n) out[i] = x[n - 1 - i];
    }'''
    k = gp.RawKernel(code, "two_phase", enable_cooperative_groups=True)
    n = 4096
    x = gp.zeros(n, dtype=gp.int32)
    out = gp.zeros(n, dtype=gp.int32)
    k((n // 256,), (256,), (x, out, n))
    np.testing.assert_array_equal(out.get(), np.arange(n)[::-1])
