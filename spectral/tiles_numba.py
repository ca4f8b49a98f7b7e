"""Compiled host tiles (Numba, optional): a fused tile's distance and score in one vectorised loop per row.

NumPy evaluates a tile as a dozen passes over a ``(tile, tile)`` buffer, and on CPUs without AVX-512 its
float64 ``exp``, ``log``, ``atan2`` and every ``log1p`` are scalar libm calls (NumPy 2.4: 4.5, 3.5, 15 and
10 ns per element on one core here, against 0.25 ns for a multiply); Numba's own ``math.exp`` and friends
call the same scalar libm (llvmlite ships no vector math library), and so does numexpr without Intel's VML.
This module therefore writes the four functions a tile needs as branch-free polynomials that LLVM
vectorises on any x86-64 level (SSE2, AVX2 or AVX-512; NEON on ARM):

* ``exp`` (x <= 0 for the scores): Cody-Waite reduction ``x = n ln2 + r``, ``|r| <= ln2 / 2``, the Taylor
  polynomial of degree 13 (truncation below 5e-18), scaled by ``2^n`` built from its bits; <= 1 ulp
  against NumPy's float64 ``exp`` on 2^17 arguments in [-750, 0] (measured); below ``log(tiny)`` it is 0,
  the kernels' flush of subnormal scores;
* ``log`` (w >= tiny): fdlibm's ``__ieee754_log`` (``w = 2^e m``, ``s = f / (2 + f)``, its degree-14 odd
  polynomial, ``e ln2`` in two parts); <= 1 ulp;
* ``atan2(u, v)`` for ``u, v >= 0`` (the sphere's ``2 atan2(|x - y|, |x + y|)``): the smaller over the larger
  (so the quotient is in [0, 1]), ``(t - 1) / (t + 1)`` above 0.66, Cephes' rational ``atan``; <= 2 ulp;
* float32 tiles: Cephes' ``expf`` and ``logf`` (<= 1 float32 ulp) on the float64 distances rounded once,
  as the NumPy tiles do; on the sphere the angle itself in float32 (Cephes ``atanf`` of the float64 sums
  rounded once): 4.8 against 6.1 ns per pair, and a few float32 ulps more (the float32 tiles drive the
  solver's cheap phase, whose floor is 1e-6).

One compiled function (:func:`fill_tile`) serves every geometry, profile and tile dtype (integer codes,
branched once per row), so a process compiles once (about 1-2 s here, then cached on disk by Numba). The
results differ from NumPy's by these few ulps (the NumPy path stays the reference: ``engine="numpy"``);
tests hold the two to a bound measured on every geometry and profile.

This module imports Numba at import; :mod:`spectral.tiles` imports it only when Numba is installed
(``pip install "attention-limits[fast]"``), and :func:`available` says whether it is.

References
----------
W. J. Cody and W. Waite, "Software Manual for the Elementary Functions" (1980); fdlibm 5.3 ``e_log.c``
(Sun Microsystems, 1993); S. L. Moshier, Cephes Math Library 2.8 (``atan.c``, ``expf.c``, ``logf.c``).
"""

from __future__ import annotations

import math

import numpy as np

try:  # Numba is optional: without it this module defines nothing to call (available() is False)
    import numba
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic
except ImportError:  # pragma: no cover - exercised where Numba is not installed
    numba = None

__all__ = ["ELEMENTWISE", "GEOMETRY_CODES", "PROFILE_CODES", "available", "elementwise", "fill_tile"]

GEOMETRY_CODES = {"circle": 0, "sphere": 1, "chordal": 2}
PROFILE_CODES = {"power": 0, "local": 1, "heat": 2}
#: Operations of :func:`elementwise` (the benchmarks' roofline measures the tiles' own vectorised functions):
#: ``exp(-a)`` (a >= 0), ``log(a)`` (a > 0), ``atan2(a, b)`` (a, b >= 0), float32 ``expf(-a)``, ``logf(a)``.
ELEMENTWISE = {"exp": 0, "log": 1, "atan2": 2, "expf": 3, "logf": 4}


def available() -> bool:
    """True when Numba is installed (the compiled tiles can run)."""
    return numba is not None


if numba is not None:
    _OPTIONS = dict(fastmath={"contract"}, error_model="numpy", boundscheck=False, nogil=True)
    _inline = numba.njit(inline="always", **_OPTIONS)

    # -------------------------------------------------------------------------------- bit casts

    @intrinsic
    def _bits64(typingctx, value):
        """The bits of a float64 as an int64 (an LLVM bitcast: free, and vectorisable)."""
        if value != types.float64:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(64))

        return types.int64(types.float64), codegen

    @intrinsic
    def _float64(typingctx, value):
        """The float64 whose bits are the int64 ``value``."""
        if value != types.int64:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.DoubleType())

        return types.float64(types.int64), codegen

    @intrinsic
    def _bits32(typingctx, value):
        """The bits of a float32 as an int32."""
        if value != types.float32:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(32))

        return types.int32(types.float32), codegen

    @intrinsic
    def _float32(typingctx, value):
        """The float32 whose bits are the int32 ``value``."""
        if value != types.int32:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.FloatType())

        return types.float32(types.int32), codegen

    # ------------------------------------------------------------------------------ float64 math

    _LOG2E = 1.4426950408889634
    _LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of ln 2: n * _LN2_HI is exact for |n| < 2^11
    _LN2_LO = 1.90821492927058770002e-10
    _EXP_LOW = -708.3964185322641  # log(2^-1022): below it exp is subnormal, flushed to 0
    _EXP_HIGH = 709.0
    _TINY64 = 2.2250738585072014e-308

    @_inline
    def _exp(x):
        """``exp(x)`` for ``x <= 709``; 0 below :data:`_EXP_LOW` (the flush of subnormal scores)."""
        xc = x if x > -708.5 else -708.5
        xc = xc if xc < _EXP_HIGH else _EXP_HIGH
        t = xc * _LOG2E
        ni = np.int32(t + 0.5) if t > 0.0 else np.int32(t - 0.5)  # nearest integer: |r| <= ln2 / 2
        nf = np.float64(ni)
        r = xc - nf * _LN2_HI
        r = r - nf * _LN2_LO
        p = 1.0 / 6227020800.0  # 1/13!
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        s = p * _float64((np.int64(ni) + 1023) << 52)
        return s if x >= _EXP_LOW else 0.0

    _LG1 = 6.666666666666735130e-01
    _LG2 = 3.999999999940941908e-01
    _LG3 = 2.857142874366239149e-01
    _LG4 = 2.222219843214978396e-01
    _LG5 = 1.818357216161805012e-01
    _LG6 = 1.531383769920937332e-01
    _LG7 = 1.479819860511658591e-01
    _SQRT2 = 1.4142135623730951
    _TWO52 = 4503599627370496.0

    @_inline
    def _log(w):
        """``log(w)`` for normal ``w > 0`` (fdlibm's ``__ieee754_log``)."""
        bits = _bits64(w)
        # the exponent as a float64 without an int64 -> float64 conversion (none in AVX2): 2^52 + e + 1023
        ef = _float64((bits >> 52) | 0x4330000000000000) - (_TWO52 + 1023.0)
        m = _float64((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)  # in [1, 2)
        big = m > _SQRT2
        m = m * 0.5 if big else m
        ef = ef + 1.0 if big else ef
        f = m - 1.0  # in [sqrt(1/2) - 1, sqrt(2) - 1]
        s = f / (2.0 + f)
        z = s * s
        w2 = z * z
        t1 = w2 * (_LG2 + w2 * (_LG4 + w2 * _LG6))
        t2 = z * (_LG1 + w2 * (_LG3 + w2 * (_LG5 + w2 * _LG7)))
        r = t2 + t1
        hfsq = 0.5 * f * f
        return ef * _LN2_HI - ((hfsq - (s * (hfsq + r) + ef * _LN2_LO)) - f)

    _AP0 = -8.750608600031904122785e-1
    _AP1 = -1.615753718733365076637e1
    _AP2 = -7.500855792314704667340e1
    _AP3 = -1.228866684490136173410e2
    _AP4 = -6.485021904942025371773e1
    _AQ0 = 2.485846490142306297962e1
    _AQ1 = 1.650270098316988542046e2
    _AQ2 = 4.328810604912902668951e2
    _AQ3 = 4.853903996359136964868e2
    _AQ4 = 1.945506571482613964425e2
    _MOREBITS = 6.123233995736765886130e-17  # pi/2 - fl(pi/2)
    _PIO4 = 7.85398163397448309616e-1
    _PIO2 = 1.57079632679489661923e0

    @_inline
    def _atan2_positive(u, v):
        """``atan2(u, v)`` for ``u, v >= 0``, not both 0 (Cephes ``atan`` of the smaller over the larger)."""
        a = u if u < v else v
        b = v if u < v else u
        big = a > 0.66 * b
        x = (a - b) / (a + b) if big else a / b  # (t - 1) / (t + 1) in (-0.21, 0], or t in [0, 0.66]
        z = x * x
        pz = (((_AP0 * z + _AP1) * z + _AP2) * z + _AP3) * z + _AP4
        qz = ((((z + _AQ0) * z + _AQ1) * z + _AQ2) * z + _AQ3) * z + _AQ4
        y = x + x * (z * pz / qz)
        y = (y + 0.5 * _MOREBITS) + _PIO4 if big else y
        return ((_PIO2 - y) + _MOREBITS) if u > v else y

    # ------------------------------------------------------------------------------ float32 math

    _F32 = np.float32
    _LOG2EF = _F32(1.44269504088896341)
    _C1F = _F32(0.693359375)
    _C2F = _F32(-2.12194440e-4)
    _EXPF_LOW = _F32(-87.33654475)  # log(2^-126)
    _EXPF_HIGH = _F32(88.0)
    _HALF32 = _F32(0.5)
    _ONE32 = _F32(1.0)
    _ZERO32 = _F32(0.0)
    _E0 = _F32(1.9875691500e-4)
    _E1 = _F32(1.3981999507e-3)
    _E2 = _F32(8.3334519073e-3)
    _E3 = _F32(4.1665795894e-2)
    _E4 = _F32(1.6666665459e-1)
    _E5 = _F32(5.0000001201e-1)
    _L0 = _F32(7.0376836292e-2)
    _L1 = _F32(-1.1514610310e-1)
    _L2 = _F32(1.1676998740e-1)
    _L3 = _F32(-1.2420140846e-1)
    _L4 = _F32(1.4249322787e-1)
    _L5 = _F32(-1.6668057665e-1)
    _L6 = _F32(2.0000714765e-1)
    _L7 = _F32(-2.4999993993e-1)
    _L8 = _F32(3.3333331174e-1)
    _SQRTHF = _F32(0.707106781186547524)
    _TINY32 = _F32(1.17549435e-38)

    @_inline
    def _expf(x):
        """Cephes ``expf`` for ``x <= 88`` (float32); 0 below ``log(FLT_MIN)``."""
        xc = x if x > _F32(-87.5) else _F32(-87.5)
        xc = xc if xc < _EXPF_HIGH else _EXPF_HIGH
        t = xc * _LOG2EF
        ni = np.int32(t + _HALF32) if t > _ZERO32 else np.int32(t - _HALF32)
        nf = np.float32(ni)
        r = xc - nf * _C1F
        r = r - nf * _C2F
        z = r * r
        p = ((((_E0 * r + _E1) * r + _E2) * r + _E3) * r + _E4) * r + _E5
        p = p * z + r + _ONE32
        s = p * _float32(np.int32((ni + 127) << 23))
        return s if x >= _EXPF_LOW else _ZERO32

    _PIO4F = _F32(0.785398163397448309616)
    _PIO2F = _F32(1.57079632679489661923)
    _T8F = _F32(0.4142135623730950)  # tan(pi / 8)
    _A0F = _F32(8.05374449538e-2)
    _A1F = _F32(-1.38776856032e-1)
    _A2F = _F32(1.99777106478e-1)
    _A3F = _F32(-3.33329491539e-1)

    @_inline
    def _atan2f_positive(u, v):
        """``atan2(u, v)`` for float32 ``u, v >= 0``, not both 0 (Cephes ``atanf`` of the smaller over the larger)."""
        a = u if u < v else v
        b = v if u < v else u
        big = a > _T8F * b
        x = (a - b) / (a + b) if big else a / b  # in (-0.42, 0] or [0, 0.42]
        z = x * x
        y = (((_A0F * z + _A1F) * z + _A2F) * z + _A3F) * z * x + x
        y = y + _PIO4F if big else y
        return (_PIO2F - y) if u > v else y

    @_inline
    def _logf(w):
        """Cephes ``logf`` for normal ``w > 0`` (float32)."""
        bits = _bits32(w)
        e = np.int32(((bits >> 23) & 0xFF) - 126)
        m = _float32(np.int32((bits & 0x007FFFFF) | 0x3F000000))  # in [0.5, 1)
        small = m < _SQRTHF
        e = np.int32(e - 1) if small else e
        x = (m + m - _ONE32) if small else (m - _ONE32)
        z = x * x
        y = ((((((((_L0 * x + _L1) * x + _L2) * x + _L3) * x + _L4) * x + _L5) * x + _L6) * x + _L7) * x + _L8)
        y = y * x * z
        fe = np.float32(e)
        y = y + _C2F * fe
        y = y - _HALF32 * z
        return (x + y) + _C1F * fe

    # ----------------------------------------------------------------------------------- tiles

    _TWO_PI = 2.0 * math.pi

    @numba.njit(cache=True, **_OPTIONS)
    def fill_tile(out, pa, pt, i0, i1, j0, j1, geometry, profile, single, scale, constant, work):
        """Scores ``C[i0:i1, j0:j1]`` into ``out[:i1 - i0, :j1 - j0]`` (float64, any tile dtype).

        ``pa`` (n, D): prepared row points; ``pt`` (D, m): prepared column points transposed (circle: D = 1,
        the angles); ``geometry``, ``profile``: :data:`GEOMETRY_CODES`, :data:`PROFILE_CODES`; ``single``:
        the score arithmetic in float32 (the distances stay float64, rounded once); ``constant``: beta, p,
        or ``-1 / (2 eps)``; ``work`` (3, >= j1 - j0) float64 scratch.
        """
        b = j1 - j0
        dims = pa.shape[1]
        dist = work[0]
        sm = work[1]
        sp = work[2]
        inv_heat = constant
        neg_beta = -constant
        p = constant
        square = constant == 2.0
        inv = 1.0 / scale  # z = d / scale as a product: one division less per pair (<= 1 ulp of z from NumPy's)
        inv32 = np.float32(1.0 / scale)
        nb32 = np.float32(-constant)
        p32 = np.float32(constant)
        heat32 = np.float32(constant)
        for r in range(i1 - i0):
            i = i0 + r
            # ---- distances of row i to columns j0..j1
            if geometry == 0:
                t = pa[i, 0]
                for j in range(b):
                    d = abs(t - pt[0, j0 + j])
                    w = _TWO_PI - d
                    dist[j] = d if d < w else w
            else:
                for j in range(b):
                    sm[j] = 0.0
                    sp[j] = 0.0
                for c in range(dims):
                    a = pa[i, c]
                    if geometry == 1:
                        for j in range(b):
                            y = pt[c, j0 + j]
                            u = a - y
                            v = a + y
                            sm[j] += u * u
                            sp[j] += v * v
                    else:
                        for j in range(b):
                            u = a - pt[c, j0 + j]
                            sm[j] += u * u
                if geometry == 1 and single:  # float32 tiles: the angle of the float64 sums in float32 arithmetic
                    for j in range(b):
                        dist[j] = np.float64(_F32(2.0) * _atan2f_positive(math.sqrt(np.float32(sm[j])),
                                                                           math.sqrt(np.float32(sp[j]))))
                elif geometry == 1:
                    for j in range(b):
                        dist[j] = 2.0 * _atan2_positive(math.sqrt(sm[j]), math.sqrt(sp[j]))
                else:
                    for j in range(b):
                        dist[j] = math.sqrt(sm[j])
            # ---- scores
            if not single:
                if profile == 0:
                    for j in range(b):
                        z = dist[j] * inv
                        out[r, j] = _exp(_log(z + 1.0) * neg_beta)
                elif profile == 1:
                    for j in range(b):
                        z = dist[j] * inv
                        if square:
                            w = z * z
                        else:
                            w = _exp(p * _log(z)) if z >= _TINY64 else 0.0
                        out[r, j] = _exp(-w)
                else:
                    for j in range(b):
                        d = dist[j]
                        out[r, j] = _exp(d * d * inv_heat)
            else:
                if profile == 0:
                    for j in range(b):
                        z = np.float32(dist[j]) * inv32
                        out[r, j] = np.float64(_expf(_logf(z + _ONE32) * nb32))
                elif profile == 1:
                    for j in range(b):
                        z = np.float32(dist[j]) * inv32
                        if square:
                            w = z * z
                        else:
                            w = _expf(p32 * _logf(z)) if z >= _TINY32 else _ZERO32
                        out[r, j] = np.float64(_expf(-w))
                else:
                    for j in range(b):
                        d = np.float32(dist[j])
                        out[r, j] = np.float64(_expf(d * d * heat32))

    @numba.njit(cache=True, **_OPTIONS)
    def elementwise(code, a, b, out):
        """``out[i] = f(a[i], b[i])`` for the :data:`ELEMENTWISE` operation ``code`` (1-d arrays; float32 ``a``
        and ``out`` for ``expf`` and ``logf``, float64 otherwise): the tiles' functions alone, for measuring."""
        if code == 0:
            for i in range(out.shape[0]):
                out[i] = _exp(-np.float64(a[i]))
        elif code == 1:
            for i in range(out.shape[0]):
                out[i] = _log(np.float64(a[i]))
        elif code == 2:
            for i in range(out.shape[0]):
                out[i] = _atan2_positive(np.float64(a[i]), np.float64(b[i]))
        elif code == 3:
            for i in range(out.shape[0]):
                out[i] = _expf(-np.float32(a[i]))
        else:
            for i in range(out.shape[0]):
                out[i] = _logf(np.float32(a[i]))

else:  # pragma: no cover - without Numba (the same names and summaries: docs/api.md is one page either way)

    def fill_tile(*args, **kwargs):
        """Scores ``C[i0:i1, j0:j1]`` into ``out[:i1 - i0, :j1 - j0]`` (float64, any tile dtype)."""
        raise ImportError("the compiled tiles need Numba: pip install 'attention-limits[fast]' (or numba)")

    def elementwise(*args, **kwargs):
        """``out[i] = f(a[i], b[i])`` for the :data:`ELEMENTWISE` operation ``code`` (1-d arrays; float32 ``a``
        and ``out`` for ``expf`` and ``logf``, float64 otherwise): the tiles' functions alone, for measuring."""
        raise ImportError("the compiled tiles need Numba: pip install 'attention-limits[fast]' (or numba)")
