"""How the runner writes numbers: times in s, ms or us, rates in GB/s."""


def num(v):
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def time_unit(s):
    return ("s", 1.0) if s >= 1 else ("ms", 1e-3) if s >= 1e-3 else ("us", 1e-6)


def fmt_time(s):
    unit, scale = time_unit(s)
    return f"{num(s / scale)} {unit}"


def fmt_rate(bytes_per_s):
    return f"{num(bytes_per_s / 1e9)} GB/s"
