"""gpuarr.random: argument checking (no GPU needed), the Philox stream
against known answers and a host reference, and statistical tests of every
distribution on the device (means, variances, chi-square, skewness,
kurtosis, bounds), not NumPy's streams.

Device tests use fixed seeds, so they are deterministic; the thresholds are
about five standard deviations (p > 1e-6 for the goodness-of-fit tests)."""
import math

import numpy
import pytest
from scipy import stats

import gpuarr as gp
from gpuarr import _core

N = 10**6
MASK64 = (1 << 64) - 1


# ============================================================ no device ====

# Random123's known-answer vectors for philox4x32-10: counter words, key
# words, result words.
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


@pytest.mark.parametrize("ctr,key,expected", KAT)
def test_philox_known_answers(ctr, key, expected):
    lo = ctr[0] | ctr[1] << 32
    hi = ctr[2] | ctr[3] << 32
    assert _core._random_philox(key[0] | key[1] << 32, hi, lo) == expected


def test_seeding_is_deterministic():
    a, b = gp.random.default_rng(5), gp.random.default_rng(5)
    assert (a._key, a._ctr_hi, a._ctr_lo) == (b._key, b._ctr_hi, b._ctr_lo)
    c = gp.random.default_rng(6)
    assert (a._key, a._ctr_hi) != (c._key, c._ctr_hi)
    d, e = gp.random.default_rng(), gp.random.default_rng()
    assert (d._key, d._ctr_hi) != (e._key, e._ctr_hi)
    rs = gp.random.RandomState(5)
    rs.seed(6)
    assert (rs._key, rs._ctr_hi) == (c._key, c._ctr_hi)
    assert gp.random.default_rng(a) is a


def test_module_api():
    for name in ("seed", "rand", "randn", "random", "random_sample", "ranf", "sample", "uniform",
                 "normal", "standard_normal", "randint", "choice", "permutation", "shuffle",
                 "default_rng", "get_random_state", "set_random_state", "RandomState",
                 "Generator"):
        assert callable(getattr(gp.random, name)), name
    for name in ("random", "integers", "normal", "standard_normal", "uniform", "choice",
                 "permutation", "shuffle"):
        assert callable(getattr(gp.random.Generator, name)), name
    rs = gp.random.RandomState(1)
    gp.random.set_random_state(rs)
    assert gp.random.get_random_state() is rs
    with pytest.raises(TypeError, match="RandomState"):
        gp.random.set_random_state(gp.random.default_rng(1))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: gp.random.random(dtype=numpy.int32), TypeError,
     r"Unsupported dtype dtype\('int32'\) for random"),
    (lambda: gp.random.default_rng(1).random(dtype=numpy.float16), TypeError,
     r"Unsupported dtype dtype\('float16'\) for random"),
    (lambda: gp.random.default_rng(1).standard_normal(3, dtype=numpy.int64), TypeError,
     r"Unsupported dtype dtype\('int64'\) for standard_normal"),
    (lambda: gp.random.rand(2, dtype=numpy.complex64), TypeError, "Unsupported dtype"),
    (lambda: gp.random.randint(0, 3, dtype=numpy.float64), TypeError,
     r"Unsupported dtype dtype\('float64'\) for randint"),
    (lambda: gp.random.default_rng(1).integers(0, 3, dtype=numpy.float32), TypeError,
     r"Unsupported dtype dtype\('float32'\) for integers"),
    (lambda: gp.random.random(-1), ValueError, "negative dimensions are not allowed"),
    (lambda: gp.random.random((2, -1)), ValueError, "negative dimensions"),
    (lambda: gp.random.rand(-1), ValueError, "negative dimensions"),
    (lambda: gp.random.random(2.5), TypeError, "expected a sequence of integers"),
    (lambda: gp.random.rand(2.5), TypeError, "cannot be interpreted as an integer"),
    (lambda: gp.random.random("a"), TypeError, "expected a sequence of integers"),
    (lambda: gp.random.randint(5, 3), ValueError, "low >= high"),
    (lambda: gp.random.randint(5, 5), ValueError, "low >= high"),
    (lambda: gp.random.randint(0), ValueError, "high <= 0"),
    (lambda: gp.random.default_rng(1).integers(5, 4, endpoint=True), ValueError, "low > high"),
    (lambda: gp.random.default_rng(1).integers(-1, endpoint=True), ValueError, "high < 0"),
    (lambda: gp.random.randint(0, 300, dtype=numpy.uint8), ValueError,
     "high is out of bounds for uint8"),
    (lambda: gp.random.randint(-1, 3, dtype=numpy.uint8), ValueError,
     "low is out of bounds for uint8"),
    (lambda: gp.random.randint(0, 3, dtype=bool), ValueError, "high is out of bounds for bool"),
    (lambda: gp.random.randint(0, 2**64 + 1, dtype=numpy.uint64), ValueError,
     "high is out of bounds for uint64"),
    (lambda: gp.random.randint(-2**63 - 1, 0), ValueError, "low is out of bounds for int64"),
    (lambda: gp.random.default_rng(1).integers(0, 2**63, dtype=numpy.int64, endpoint=True),
     ValueError, "high is out of bounds for int64"),
    (lambda: gp.random.randint(numpy.array([1, 2]), 5), TypeError, "array-valued low"),
    (lambda: gp.random.normal(0, -1, 3), ValueError, "scale < 0"),
    (lambda: gp.random.default_rng(1).normal(0, -1), ValueError, "scale < 0"),
    (lambda: gp.random.normal(numpy.zeros(2)), TypeError, "array-valued loc"),
    (lambda: gp.random.uniform("a"), TypeError, "low must be a real number"),
    (lambda: gp.random.uniform(0, numpy.inf), OverflowError, "range exceeds valid bounds"),
    (lambda: gp.random.default_rng(1).random(3, out=numpy.empty(3)), TypeError,
     r"gpuarr\.asarray\(\)"),
    (lambda: gp.random.choice(numpy.arange(3)), TypeError, r"gpuarr\.asarray\(\)"),
    (lambda: gp.random.permutation(numpy.arange(3)), TypeError, r"gpuarr\.asarray\(\)"),
    (lambda: gp.random.shuffle(numpy.arange(3)), TypeError, r"gpuarr\.asarray\(\)"),
    (lambda: gp.random.default_rng(1).shuffle(numpy.arange(3)), TypeError,
     r"gpuarr\.asarray\(\)"),
    (lambda: gp.random.shuffle([1, 2, 3]), TypeError, "in place on a gpuarr.ndarray"),
    (lambda: gp.random.permutation(2.5), IndexError, "x must be an integer or at least 1-dim"),
    (lambda: gp.random.choice(5, 6, replace=False), ValueError,
     "Cannot take a larger sample than population when 'replace=False'"),
    (lambda: gp.random.default_rng(1).choice(5, 6, replace=False), ValueError,
     "Cannot take a larger sample than population when replace is False"),
    (lambda: gp.random.choice(0, 3), ValueError, "a must be greater than 0"),
    (lambda: gp.random.choice(-1), ValueError, "a must be greater than 0"),
    (lambda: gp.random.default_rng(1).choice(0, 3), ValueError, "a must be a positive integer"),
    (lambda: gp.random.choice(5, -1), ValueError, "negative dimensions"),
    (lambda: gp.random.choice(5, 3, p=[0.2] * 5), NotImplementedError, "p="),
    (lambda: gp.random.seed(-1), ValueError, "Seed must be non-negative"),
    (lambda: gp.random.seed(1.5), TypeError, "seed must be None, a non-negative integer"),
    (lambda: gp.random.default_rng("a"), TypeError, "seed must be None"),
    (lambda: gp.random.RandomState(-3), ValueError, "Seed must be non-negative"),
])
def test_argument_errors_before_the_device(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_seed_accepts_large_and_sequence_seeds():
    """Each seed sets the state as NumPy's SeedSequence mixes it: equal
    seeds (an int, the NumPy integer and the one-element list of it) the same state,
    different ones (None: fresh entropy) different states, the counter
    back at 0."""
    state = gp.random.get_random_state()

    def seeded(seed):
        gp.random.seed(seed)
        return state._key, state._ctr_hi, state._ctr_lo

    words = numpy.random.SeedSequence(2**100).generate_state(4, numpy.uint32)
    assert seeded(2**100) == (int(words[0]) | int(words[1]) << 32,
                              int(words[2]) | int(words[3]) << 32, 0)
    assert seeded(7) == seeded(numpy.int64(7)) == seeded([7]) != seeded([1, 2, 3])
    assert seeded(None) != seeded(None)


# ============================================================== device =====

def host(x):
    assert isinstance(x, gp.ndarray)
    return gp.asnumpy(x)


def philox_words(g, blocks):
    """The first `blocks` blocks of g's stream from its current counter, on
    the host, as one uint32 array."""
    words = [_core._random_philox(g._key, g._ctr_hi, (g._ctr_lo + b) & MASK64)
             for b in range(blocks)]
    return numpy.array(words, dtype=numpy.uint64).ravel()


@pytest.mark.gpu
def test_stream_matches_host_philox():
    g = gp.random.default_rng(7)
    w = philox_words(g, 8)
    x = host(g.random(5, dtype=numpy.float32))      # 2 blocks (4 values each)
    assert g._ctr_lo == 2
    numpy.testing.assert_array_equal(x, (w[:5] >> 8).astype(numpy.float32) * 2.0**-24)
    y = host(g.random(3))                           # 2 blocks (2 values each)
    assert g._ctr_lo == 4
    w64 = (w[8:16:2] << 32) | w[9:16:2]
    numpy.testing.assert_array_equal(y, (w64[:3] >> 11).astype(numpy.float64) * 2.0**-53)
    k = host(g.integers(10, 1010, size=4))          # 2 blocks, 64 bits a value
    w64 = (w[16:24:2] << 32) | w[17:24:2]
    expected = [10 + (int(v) * 1000 >> 64) for v in w64]
    numpy.testing.assert_array_equal(k, expected)
    assert g._ctr_lo == 6


@pytest.mark.gpu
def test_alignment_and_tails_do_not_change_the_stream():
    for dtype in (numpy.float32, numpy.float64):
        ref = host(gp.random.default_rng(3).random(1001, dtype=dtype))
        for n in (0, 1, 3, 5, 7, 17):
            part = host(gp.random.default_rng(3).random(n, dtype=dtype))
            numpy.testing.assert_array_equal(part, ref[:n])
        buf = gp.zeros(1002, dtype=dtype)
        out = gp.random.default_rng(3).random(out=buf[1:], dtype=dtype)  # not 16-byte aligned
        h = host(buf)
        assert h[0] == 0
        numpy.testing.assert_array_equal(h[1:], ref)
        assert out.shape == (1001,)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,bits", [(numpy.float32, 24), (numpy.float64, 53)])
def test_uniform_statistics(dtype, bits):
    x = host(gp.random.default_rng(11).random(N, dtype=dtype))
    assert x.dtype == dtype and x.shape == (N,)
    assert x.min() >= 0 and x.max() < 1
    numpy.testing.assert_array_equal(x * 2.0**bits, numpy.floor(x * 2.0**bits))
    x = x.astype(numpy.float64)
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(x.var() - 1 / 12) < 5 * math.sqrt((1 / 80 - 1 / 144) / N)
    counts = numpy.bincount(numpy.floor(x * 100).astype(int), minlength=100)
    assert stats.chisquare(counts).pvalue > 1e-6


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_uniform_low_high(dtype):
    x = host(gp.random.uniform(-3.0, 5.0, size=(1000, 1000), dtype=dtype))
    assert x.dtype == dtype and x.shape == (1000, 1000)
    assert x.min() >= -3 and x.max() < 5
    assert abs(x.mean() - 1.0) < 5 * 8 * math.sqrt(1 / 12 / N)
    y = host(gp.random.default_rng(2).uniform(2, 3, size=1000))
    assert y.min() >= 2 and y.max() < 3


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_normal_statistics(dtype):
    z = host(gp.random.default_rng(12).standard_normal(N, dtype=dtype))
    assert z.dtype == dtype
    z = z.astype(numpy.float64)
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.std() - 1) < 5 / math.sqrt(2 * N)
    assert abs(stats.skew(z)) < 5 * math.sqrt(6 / N)
    assert abs(stats.kurtosis(z)) < 5 * math.sqrt(24 / N)
    assert stats.kstest(z, "norm").pvalue > 1e-6
    counts, edges = numpy.histogram(z, bins=numpy.linspace(-4, 4, 41))
    expected = numpy.diff(stats.norm.cdf(edges)) * N
    keep = expected > 20
    assert stats.chisquare(counts[keep], expected[keep] * counts[keep].sum()
                           / expected[keep].sum()).pvalue > 1e-6


@pytest.mark.gpu
def test_normal_loc_scale_and_randn():
    z = host(gp.random.normal(3.0, 2.0, size=N))
    assert abs(z.mean() - 3) < 5 * 2 / math.sqrt(N)
    assert abs(z.std() - 2) < 5 * 2 / math.sqrt(2 * N)
    r = gp.random.randn(3, 4, dtype=numpy.float32)
    assert r.shape == (3, 4) and r.dtype == numpy.float32
    assert gp.random.default_rng(1).normal(0, 0, size=10).get().tolist() == [0.0] * 10


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [numpy.int8, numpy.uint8, numpy.int16, numpy.uint16,
                                   numpy.int32, numpy.uint32, numpy.int64, numpy.uint64])
def test_randint_small_range(dtype):
    low = 0 if numpy.dtype(dtype).kind == "u" else -5
    x = host(gp.random.randint(low, low + 10, size=N, dtype=dtype))
    assert x.dtype == dtype and x.shape == (N,)
    assert x.min() == low and x.max() == low + 9
    counts = numpy.bincount((x.astype(numpy.int64) - low))
    assert len(counts) == 10
    assert stats.chisquare(counts).pvalue > 1e-6


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [numpy.int8, numpy.uint8, numpy.int16, numpy.uint16])
def test_randint_full_range(dtype):
    info = numpy.iinfo(dtype)
    x = host(gp.random.randint(int(info.min), int(info.max) + 1, size=N, dtype=dtype))
    span = int(info.max) - int(info.min) + 1
    counts = numpy.bincount(x.astype(numpy.int64) - int(info.min), minlength=span)
    # 10**6 draws give each of the 65536 16-bit values ~15.3 on average: some
    # value is missed in ~1% of draws (65536 * exp(-15.3); NumPy's generator
    # too), five or more in ~1e-11; either end, ~5e-7
    never = numpy.flatnonzero(counts == 0) + int(info.min)
    assert len(counts) == span and counts[0] > 0 and counts[-1] > 0 and len(never) < 5, never
    assert stats.chisquare(counts).pvalue > 1e-6


@pytest.mark.gpu
def test_integers_wide_ranges():
    g = gp.random.default_rng(13)
    # 3 * 2**62 > 2**32 takes 128 random bits a value; three equal bins.
    x = host(g.integers(0, 3 * 2**62, size=N, dtype=numpy.uint64))
    assert int(x.max()) < 3 * 2**62
    counts = numpy.bincount((x >> numpy.uint64(62)).astype(numpy.int64), minlength=3)
    assert len(counts) == 3 and stats.chisquare(counts).pvalue > 1e-6
    full = host(g.integers(0, 2**64, size=N, dtype=numpy.uint64))
    top = (full >> numpy.uint64(63)).astype(numpy.int64)
    assert abs(top.mean() - 0.5) < 5 * 0.5 / math.sqrt(N)
    s = host(g.integers(-2**63, 2**63 - 1, size=N, dtype=numpy.int64, endpoint=True))
    assert (s < 0).any() and (s > 0).any()
    assert abs((s < 0).mean() - 0.5) < 5 * 0.5 / math.sqrt(N)
    u32 = host(g.integers(0, 2**32, size=N, dtype=numpy.uint32))
    assert abs(u32.astype(numpy.float64).mean() / 2**32 - 0.5) < 5 * math.sqrt(1 / 12 / N)


@pytest.mark.gpu
def test_randint_bool_and_endpoint():
    b = host(gp.random.randint(2, size=N, dtype=bool))
    assert b.dtype == numpy.bool_
    assert abs(b.mean() - 0.5) < 5 * 0.5 / math.sqrt(N)
    e = host(gp.random.default_rng(1).integers(1, 6, size=N, endpoint=True))
    assert e.dtype == numpy.int64
    assert set(numpy.unique(e).tolist()) == {1, 2, 3, 4, 5, 6}
    one = host(gp.random.randint(7, 8, size=100, dtype=numpy.int8))
    assert (one == 7).all()


@pytest.mark.gpu
def test_reproducible_and_advancing():
    gp.random.seed(5)
    a = host(gp.random.rand(1000))
    b = host(gp.random.rand(1000))
    gp.random.seed(5)
    numpy.testing.assert_array_equal(host(gp.random.rand(1000)), a)
    assert not numpy.array_equal(a, b)
    x = host(gp.random.default_rng(9).integers(0, 2**31, size=1000))
    numpy.testing.assert_array_equal(host(gp.random.default_rng(9).integers(0, 2**31,
                                                                             size=1000)), x)
    assert not numpy.array_equal(host(gp.random.default_rng(10).integers(0, 2**31, size=1000)),
                                 x)
    rs1, rs2 = gp.random.RandomState(4), gp.random.RandomState(4)
    numpy.testing.assert_array_equal(host(rs1.randn(100)), host(rs2.randn(100)))


@pytest.mark.gpu
def test_shapes_and_dtypes():
    assert gp.random.rand(2, 3).shape == (2, 3)
    assert gp.random.rand(2, 3).dtype == numpy.float64
    assert gp.random.rand(2, 3, dtype=numpy.float32).dtype == numpy.float32
    assert gp.random.rand().shape == ()
    assert gp.random.random().shape == ()
    assert gp.random.random((2, 3, 4)).shape == (2, 3, 4)
    assert gp.random.random_sample([5]).shape == (5,)
    assert gp.random.random(0).shape == (0,)
    assert gp.random.random((3, 0)).shape == (3, 0)
    assert gp.random.randint(5).shape == ()
    assert gp.random.randint(5, size=(2, 2)).dtype == numpy.int64
    assert gp.random.randint(5, size=(2, 2), dtype=int).shape == (2, 2)
    assert gp.random.standard_normal((4, 5), dtype=numpy.float32).dtype == numpy.float32
    assert gp.random.normal(size=[3], dtype=numpy.float32).dtype == numpy.float32
    assert gp.random.uniform(size=(2,), dtype=numpy.float32).dtype == numpy.float32
    g = gp.random.default_rng(0)
    assert g.random((3, 3), dtype=numpy.float32).dtype == numpy.float32
    assert g.integers(10, size=(2, 5), dtype=numpy.uint16).dtype == numpy.uint16
    assert g.choice(5).shape == ()


@pytest.mark.gpu
def test_generator_out():
    g = gp.random.default_rng(0)
    o = gp.empty((4, 5))
    r = g.random(out=o)
    assert r is o
    h = host(o)
    assert h.min() >= 0 and h.max() < 1 and len(numpy.unique(h)) == 20
    o32 = gp.empty(7, dtype=numpy.float32)
    assert g.standard_normal(7, dtype=numpy.float32, out=o32) is o32
    with pytest.raises(TypeError, match="wrong type"):
        g.random(out=gp.empty(3, dtype=numpy.float32))
    with pytest.raises(ValueError, match="size must match out.shape"):
        g.random(4, out=gp.empty(3))
    with pytest.raises(ValueError, match="contiguous"):
        g.random(out=gp.empty((3, 4))[:, ::2])


@pytest.mark.gpu
def test_permutation_of_int():
    p = host(gp.random.permutation(N))
    assert p.dtype == numpy.int64
    numpy.testing.assert_array_equal(numpy.sort(p), numpy.arange(N))
    assert abs(numpy.corrcoef(p, numpy.arange(N))[0, 1]) < 5 / math.sqrt(N)
    assert host(gp.random.permutation(0)).shape == (0,)
    assert host(gp.random.permutation(-3)).shape == (0,)
    assert host(gp.random.permutation(1)).tolist() == [0]
    g = gp.random.default_rng(21)
    counts = {}
    for _ in range(600):
        key = tuple(host(g.permutation(3)).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    assert stats.chisquare(list(counts.values())).pvalue > 1e-6


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [numpy.int8, numpy.int16, numpy.float32, numpy.float64,
                                   numpy.complex128])
@pytest.mark.parametrize("shape", [(100,), (50, 3), (20, 4, 5)])
def test_permutation_of_array(dtype, shape):
    x = gp.arange(math.prod(shape), dtype=numpy.int64).reshape(shape).astype(dtype)
    before = host(x)
    p = gp.random.permutation(x)
    assert p.shape == shape and p.dtype == dtype
    numpy.testing.assert_array_equal(host(x), before)          # a copy, x untouched
    hp = host(p)

    def by_first_column(a):
        rows = a.reshape(shape[0], -1)
        return rows[numpy.argsort(rows[:, 0].real)]

    numpy.testing.assert_array_equal(by_first_column(hp), by_first_column(before))
    assert not numpy.array_equal(hp, before)


@pytest.mark.gpu
def test_generator_permutation_axis():
    x = gp.arange(24).reshape(2, 12)
    p = host(gp.random.default_rng(3).permutation(x, axis=1))
    assert p.shape == (2, 12)
    numpy.testing.assert_array_equal(numpy.sort(p[0]), numpy.arange(12))
    numpy.testing.assert_array_equal(p[1], p[0] + 12)


@pytest.mark.gpu
def test_shuffle_in_place():
    x = gp.arange(1000)
    gp.random.shuffle(x)
    h = host(x)
    numpy.testing.assert_array_equal(numpy.sort(h), numpy.arange(1000))
    assert not numpy.array_equal(h, numpy.arange(1000))
    m = gp.arange(30, dtype=numpy.float32).reshape(10, 3)
    gp.random.default_rng(1).shuffle(m)
    hm = host(m)
    numpy.testing.assert_array_equal(hm[:, 1], hm[:, 0] + 1)
    numpy.testing.assert_array_equal(numpy.sort(hm[:, 0]), numpy.arange(0, 30, 3))
    base = gp.arange(20)
    gp.random.shuffle(base[::2])                                # a strided view
    hb = host(base)
    numpy.testing.assert_array_equal(hb[1::2], numpy.arange(1, 20, 2))
    numpy.testing.assert_array_equal(numpy.sort(hb[::2]), numpy.arange(0, 20, 2))
    c = gp.arange(12).reshape(3, 4)
    gp.random.default_rng(2).shuffle(c, axis=1)
    hc = host(c)
    numpy.testing.assert_array_equal(hc[1], hc[0] + 4)
    numpy.testing.assert_array_equal(numpy.sort(hc[0]), numpy.arange(4))
    one = gp.arange(1)
    gp.random.shuffle(one)
    assert host(one).tolist() == [0]


@pytest.mark.gpu
def test_choice():
    c = host(gp.random.choice(10, size=N))
    assert c.dtype == numpy.int64 and c.min() == 0 and c.max() == 9
    assert stats.chisquare(numpy.bincount(c)).pvalue > 1e-6
    a = gp.arange(0, 50, 10)
    s = host(gp.random.choice(a, size=(2, 3)))
    assert s.shape == (2, 3) and set(s.ravel().tolist()) <= {0, 10, 20, 30, 40}
    u = host(gp.random.choice(100, 50, replace=False))
    assert u.shape == (50,) and len(numpy.unique(u)) == 50 and u.max() < 100
    v = host(gp.random.choice(a, 5, replace=False))
    numpy.testing.assert_array_equal(numpy.sort(v), [0, 10, 20, 30, 40])
    w = host(gp.random.choice([1.5, 2.5], size=100))
    assert set(w.tolist()) == {1.5, 2.5}
    assert host(gp.random.choice(0, 0)).shape == (0,)


@pytest.mark.gpu
def test_generator_choice_rows_and_axis():
    g = gp.random.default_rng(8)
    x = gp.arange(24).reshape(2, 3, 4)
    assert g.choice(x, (5, 6), axis=1).shape == (2, 5, 6, 4)
    rows = host(g.choice(gp.arange(12).reshape(6, 2), 4, replace=False))
    assert rows.shape == (4, 2)
    numpy.testing.assert_array_equal(rows[:, 1], rows[:, 0] + 1)
    assert len(numpy.unique(rows[:, 0])) == 4
