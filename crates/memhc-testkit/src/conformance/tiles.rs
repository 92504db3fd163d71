//! Tiled objects ([`memhc_backend::tiles`]): the four tiled copies put every element where the
//! definition says (checked element by element against a plain copy, not against
//! [`Tiles::scatter`]), and GEMM batches over interleaved tiles (rows a whole matrix apart)
//! are accepted and computed as the reference computes them. A backend without tiled copies
//! ([`Backend::supports_tiles`] false) passes both checks by having nothing to check.

use num_complex::Complex64;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use memhc_backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc_backend::tiles::Tiles;
use memhc_backend::{Backend, BackendError, ELEMENT_BYTES, HostMemory, as_bytes, as_bytes_mut};

use super::*;

/// The whole matrix of `t` from the packed order, by the definition: element `(R, C)` is row
/// `R mod r`, column `C mod c` of component `g (R / r) + C / c`, all row-major.
fn whole_matrix(t: &Tiles, packed: &[Complex64]) -> Vec<Complex64> {
    let (g, r, c) = (t.grid(), t.rows(), t.cols());
    let mut out = Vec::with_capacity(packed.len());
    for row in 0..g * r {
        for col in 0..g * c {
            let comp = g * (row / r) + col / c;
            out.push(packed[comp * r * c + (row % r) * c + col % c]);
        }
    }
    out
}

/// Copies in and out through the tiles, synchronously and asynchronously, at offsets, with
/// square and non-square tiles: the device holds the whole matrix, the host gets the packed
/// order back, and copies out of bounds or of the wrong length are invalid arguments.
pub fn tiled_copies_follow_the_layout<B: Backend>(b: &B) -> Check {
    if !b.supports_tiles() {
        return Ok(());
    }
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x711e);
    for (g, r, c) in [(4, 3, 3), (4, 2, 5), (3, 1, 4)] {
        let t = Tiles::new(g, r, c).ok_or_else(|| Failure("tiles".into()))?;
        let packed = random_elements(&mut rng, t.elems());
        let want = whole_matrix(&t, &packed);
        let (at, bytes) = (3 * ELEMENT_BYTES, t.bytes());
        let buf = b.alloc(at + bytes)?;
        let device = |b: &B| -> Result<Vec<Complex64>, Failure> {
            let mut got = vec![Complex64::new(0.0, 0.0); t.elems()];
            b.copy_d2h(&s, &buf, at, as_bytes_mut(&mut got))?;
            Ok(got)
        };
        b.copy_h2d_tiled(&s, as_bytes(&packed), &buf, at, &t)?;
        ensure(device(b)? == want, || {
            format!("copy_h2d_tiled {g}x{g} of {r}x{c}: not the whole matrix")
        })?;
        let mut back = vec![Complex64::new(0.0, 0.0); t.elems()];
        b.copy_d2h_tiled(&s, &buf, at, as_bytes_mut(&mut back), &t)?;
        ensure(back == packed, || {
            format!("copy_d2h_tiled {g}x{g} of {r}x{c}: not the packed order")
        })?;
        // Asynchronous, through host memory of the backend, at offsets on both sides.
        let mut host = b.alloc_host(16 + bytes)?;
        host.as_mut_bytes()?[16..].copy_from_slice(as_bytes(&packed));
        b.copy_h2d(&s, &vec![0u8; bytes], &buf, at)?;
        b.copy_h2d_async_tiled(&s, &host, 16, &buf, at, &t)?;
        b.stream_synchronize(&s)?;
        ensure(device(b)? == want, || {
            format!("copy_h2d_async_tiled {g}x{g} of {r}x{c}: not the whole matrix")
        })?;
        let out = b.alloc_host(32 + bytes)?;
        b.copy_d2h_async_tiled(&s, &buf, at, &out, 32, &t)?;
        b.stream_synchronize(&s)?;
        out.read(32, as_bytes_mut(&mut back))?;
        ensure(back == packed, || {
            format!("copy_d2h_async_tiled {g}x{g} of {r}x{c}: not the packed order")
        })?;
        let refused =
            |r: Result<(), BackendError>| matches!(r, Err(BackendError::InvalidArgument { .. }));
        let short = vec![0u8; bytes - ELEMENT_BYTES];
        ensure(refused(b.copy_h2d_tiled(&s, &short, &buf, at, &t)), || {
            "a tiled copy in of the wrong length was accepted".into()
        })?;
        ensure(
            refused(b.copy_h2d_tiled(&s, as_bytes(&packed), &buf, at + 16, &t)),
            || "a tiled copy in past the end of the buffer was accepted".into(),
        )?;
        ensure(
            refused(b.copy_d2h_async_tiled(&s, &buf, at, &out, 48, &t)),
            || "a tiled copy out past the end of the host memory was accepted".into(),
        )?;
        b.synchronize()?;
        free_all(b, [buf])?;
    }
    Ok(())
}

/// One batch of the 16 products `C_t = A_t B_t` of the tiles of three 4 x 4 tiled matrices
/// (column-major tiles, leading dimension the whole matrix's), and one GEMM of the whole
/// matrices: both as the reference computes them on dense copies of the tiles. The outputs'
/// element ranges interleave; the batch is valid all the same.
pub fn gemm_on_tiles_matches_reference<B: Backend>(b: &B) -> Check {
    if !b.supports_tiles() {
        return Ok(());
    }
    let s = b.create_stream()?;
    let mut rng = ChaCha8Rng::seed_from_u64(0x7113);
    let (g, n) = (4, 5);
    let ld = g * n;
    let (a, x) = (
        random_elements(&mut rng, ld * ld),
        random_elements(&mut rng, ld * ld),
    );
    let (ab, xb) = (upload(b, &s, &a)?, upload(b, &s, &x)?);
    let cb = b.alloc(ld * ld * ELEMENT_BYTES)?;
    b.copy_h2d(&s, &vec![0u8; ld * ld * ELEMENT_BYTES], &cb, 0)?;
    let shape = GemmShape {
        lda: ld,
        ldb: ld,
        ldc: ld,
        ..GemmShape::dense(n, n, n)
    };
    let tile = |t: usize| (t % g) * n + (t / g) * n * ld; // column-major tile (t % g, t / g)
    let items: Vec<_> = (0..g * g)
        .map(|t| GemmItem {
            a: DeviceRef::new(&ab, tile(t)),
            b: DeviceRef::new(&xb, tile(t)),
            c: DeviceRef::new(&cb, tile(t)),
        })
        .collect();
    b.gemm_batched(&s, &shape, &items)?;
    let got = download(b, &s, &cb)?;
    let mut want = vec![Complex64::new(0.0, 0.0); ld * ld];
    for t in 0..g * g {
        let dense = |m: &[Complex64]| -> Vec<Complex64> {
            (0..n * n)
                .map(|e| m[tile(t) + (e / n) * ld + e % n])
                .collect()
        };
        let mut c = vec![Complex64::new(0.0, 0.0); n * n];
        reference_gemm(&GemmShape::dense(n, n, n), &dense(&a), &dense(&x), &mut c);
        for (e, v) in c.into_iter().enumerate() {
            want[tile(t) + (e / n) * ld + e % n] = v;
        }
    }
    let err = relative_error(&got, &want);
    ensure(err <= TOLERANCE, || {
        format!("a batch over interleaved tiles: relative error {err:e}")
    })?;
    // The whole matrices, one product of order g n.
    let whole = GemmShape::dense(ld, ld, ld);
    let one = [GemmItem {
        a: DeviceRef::new(&ab, 0),
        b: DeviceRef::new(&xb, 0),
        c: DeviceRef::new(&cb, 0),
    }];
    b.gemm_batched(&s, &whole, &one)?;
    let got = download(b, &s, &cb)?;
    reference_gemm(&whole, &a, &x, &mut want);
    let err = relative_error(&got, &want);
    ensure(err <= TOLERANCE, || {
        format!("the whole matrices' product: relative error {err:e}")
    })?;
    b.synchronize()?;
    free_all(b, [ab, xb, cb])
}
