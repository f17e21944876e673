"""Random programs over borrowed NumPy buffers (docs/numpy-api.md, "NumPy
arrays in"): values made from held NumPy arrays, pending work on them, and
NumPy writes to the arrays (whole, parts, from threads, read(2)) in between;
every value is compared with NumPy run on copies taken at the calls.

    python tools/fuzz/borrowfuzz.py [--seed S] [-n PROGRAMS]

glibc's mmap threshold is fixed at 128 KiB here, so arrays of 64 KiB
elements are mappings of their own (borrowed) whatever was freed before."""

import argparse
import ctypes
import os
import sys
import tempfile
import threading

ctypes.CDLL(None).mallopt(-3, 1 << 17)  # M_MMAP_THRESHOLD

import numpy  # noqa: E402

import cpnumeric as cp  # noqa: E402

N = 1 << 16  # elements of each NumPy array (512 KiB of float64)


def program(rng, tmp):
    arrays = [rng.random(N) for _ in range(3)]
    values = []  # (cpnumeric value, NumPy reference)
    for step in range(int(rng.integers(6, 20))):
        k = int(rng.integers(0, 9))
        a = arrays[int(rng.integers(0, len(arrays)))]
        if k <= 2:  # bring in (whole, a part, a 2-d layout)
            form = int(rng.integers(0, 3))
            src = a if form == 0 else a[N // 4:] if form == 1 else a.reshape(256, -1).T
            values.append((cp.asarray(src), src.copy()))
        elif k == 3 and values:  # pending work on a value
            i = int(rng.integers(0, len(values)))
            x, ref = values[i]
            c = float(rng.integers(1, 5))
            values.append((cp.sqrt(abs(x) * c + 1.0), numpy.sqrt(abs(ref) * c + 1.0)))
            values.append((x.sum(axis=-1), ref.sum(axis=-1)))
        elif k == 4:  # NumPy writes the array (whole or a part)
            lo = int(rng.integers(0, N))
            a[lo:lo + int(rng.integers(1, N))] = float(rng.integers(-3, 3))
        elif k == 5:  # another thread writes it
            t = threading.Thread(target=a.__imul__, args=(0.5,))
            t.start()
            t.join()
        elif k == 6:  # read(2) into it
            path = os.path.join(tmp, "data.bin")
            numpy.full(N, 2.5).tofile(path)
            with open(path, "rb", buffering=0) as f:
                f.readinto(a)
        elif k == 7 and values:  # cpnumeric writes a value
            i = int(rng.integers(0, len(values)))
            x, ref = values[i]
            if x.ndim >= 1 and x.size:
                x[(0,) * x.ndim] = -7.0
                ref[(0,) * ref.ndim] = -7.0
                x += 1.0
                ref += 1.0
        elif k == 8 and values:  # export, drop
            i = int(rng.integers(0, len(values)))
            x, ref = values.pop(i)
            numpy.testing.assert_allclose(numpy.asarray(x), ref, rtol=1e-10, atol=1e-8)
    for x, ref in values:
        numpy.testing.assert_allclose(numpy.asarray(x), ref, rtol=1e-10, atol=1e-8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-n", type=int, default=200)
    args = ap.parse_args()
    if not cp._cpn.borrowing():
        print("borrowfuzz: borrowing is off here (CPN_BORROW=0 or no userfaultfd)")
        return 0
    cp.reset_stats()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for p in range(args.n):
            try:
                program(numpy.random.default_rng([args.seed, p]), tmp)
            except AssertionError as e:
                failures += 1
                print(f"borrowfuzz {args.seed}:{p} FAILED: {str(e)[:400]}")
    s = cp.stats()
    print(f"borrowfuzz seed {args.seed}: {args.n - failures}/{args.n} ok; "
          f"{s['imports_guarded']} borrowed, {s['import_copies']} copied, "
          f"{s['guard_copies']} copies at writes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
