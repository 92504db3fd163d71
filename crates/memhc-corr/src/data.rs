//! Node data: seeded values, `.npy` files and (with the `hdf5` feature) HDF5 datasets. The
//! files are checked when a file is loaded (present, the right type and shape, long enough)
//! and read when a run needs the values.

use std::fs::File;
use std::io::{BufReader, Seek};

use hadron::{HadronNode, NodeShape};
use ndarray_npy::npy::header::Header;
use num_complex::Complex64;

use crate::error::{Invalid, Problem, Result};
use crate::format::DataSource;

fn bad(id: &str, message: String) -> Invalid {
    Invalid::at(format!("node {id}"), Problem::Data(message))
}

/// A Python-style shape: `(16, 8, 8)`.
fn shape_text(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}

/// Checks that node `id`'s data is there and fits `shape`, without reading the values.
pub(crate) fn check(id: &str, shape: &NodeShape, data: &DataSource) -> Result<(), Invalid> {
    match data {
        DataSource::Seed(_) => Ok(()),
        DataSource::Npy(path) => npy_header(path, shape)
            .map(|_| ())
            .map_err(|m| bad(id, format!("{path}: {m}"))),
        DataSource::Hdf5 { file, dataset } => {
            hdf5_data::check(file, dataset, shape).map_err(|m| bad(id, format!("{file}: {m}")))
        }
    }
}

/// Node `id`'s values.
pub(crate) fn load(id: &str, shape: &NodeShape, data: &DataSource) -> Result<HadronNode> {
    let values = match data {
        DataSource::Seed(seed) => {
            let len = shape.layout()?.elems();
            crate::seed::try_values(*seed, len).map_err(|e| {
                crate::CorrError::TooLarge(format!("node {id}: {len} seeded values: {e}"))
            })?
        }
        DataSource::Npy(path) => {
            read_npy(path, shape).map_err(|m| bad(id, format!("{path}: {m}")))?
        }
        DataSource::Hdf5 { file, dataset } => {
            hdf5_data::read(file, dataset, shape).map_err(|m| bad(id, format!("{file}: {m}")))?
        }
    };
    Ok(HadronNode::from_vec(shape, values)?)
}

/// Node `id`'s values written into `out`, which has exactly the shape's elements (memory the
/// caller filled in place: the backend's page-locked host memory, so that the node is loaded
/// straight into it). Seeded values and `.npy` files are written straight into `out`; an
/// HDF5 dataset is read, then copied in.
pub(crate) fn load_into(
    id: &str,
    shape: &NodeShape,
    data: &DataSource,
    out: &mut [Complex64],
) -> Result<()> {
    let elems = shape.layout()?.elems();
    if out.len() != elems {
        return Err(crate::CorrError::Usage(format!(
            "node {id}: a buffer of {} elements for {elems} values",
            out.len()
        )));
    }
    match data {
        DataSource::Seed(seed) => crate::seed::fill(*seed, out),
        DataSource::Npy(path) => {
            read_npy_into(path, shape, out).map_err(|m| bad(id, format!("{path}: {m}")))?;
        }
        DataSource::Hdf5 { file, dataset } => {
            let values = hdf5_data::read(file, dataset, shape)
                .map_err(|m| bad(id, format!("{file}: {m}")))?;
            if values.len() != elems {
                return Err(
                    bad(id, format!("{file}: {} values, not {elems}", values.len())).into(),
                );
            }
            out.copy_from_slice(&values);
        }
    }
    Ok(())
}

/// The values of a `.npy` file whose header matches `shape`, decoded straight into `out` (of
/// the shape's length) piece by piece; the file must end with the last value.
fn read_npy_into(path: &str, shape: &NodeShape, out: &mut [Complex64]) -> Result<(), String> {
    use std::io::Read;
    const PIECE: usize = 4096;
    let (mut reader, header) = npy_header(path, shape)?;
    let big_endian = header.type_descriptor.as_string().map(String::as_str) == Some(">c16");
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        if big_endian {
            f64::from_be_bytes(w)
        } else {
            f64::from_le_bytes(w)
        }
    };
    let mut buf = vec![0u8; PIECE * 16];
    let len = out.len();
    for (done, chunk) in out.chunks_mut(PIECE).enumerate() {
        let piece = &mut buf[..chunk.len() * 16];
        reader.read_exact(piece).map_err(|e| {
            format!(
                "unreadable data: {e} after {} of {len} values",
                done * PIECE
            )
        })?;
        for (z, c) in chunk.iter_mut().zip(piece.chunks_exact(16)) {
            *z = Complex64::new(word(&c[..8]), word(&c[8..]));
        }
    }
    let mut extra = [0u8; 1];
    loop {
        match reader.read(&mut extra) {
            Ok(0) => return Ok(()),
            Ok(_) => return Err("unreadable data: bytes after the last value".to_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("unreadable data: {e}")),
        }
    }
}

/// Opens a `.npy` file and checks its header and length against `shape`; the reader is left
/// at the start of the data.
fn npy_header(path: &str, shape: &NodeShape) -> Result<(BufReader<File>, Header), String> {
    let expected = format!(
        "expected complex128 ('<c16') of shape {} in C order",
        shape_text(&shape.array_shape())
    );
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let total = file.metadata().map_err(|e| e.to_string())?.len();
    let mut reader = BufReader::new(file);
    let header = Header::from_reader(&mut reader).map_err(|e| format!("not a .npy file: {e}"))?;
    let descr = header
        .type_descriptor
        .as_string()
        .cloned()
        .unwrap_or_default();
    let complex128 = matches!(descr.as_str(), "<c16" | ">c16");
    if !complex128 || header.shape != shape.array_shape() || header.layout.is_fortran() {
        let order = if header.layout.is_fortran() {
            " in Fortran order"
        } else {
            ""
        };
        return Err(format!(
            "{expected}, found '{descr}' of shape {}{order}",
            shape_text(&header.shape)
        ));
    }
    let start = reader.stream_position().map_err(|e| e.to_string())?;
    let need = shape.layout().map_err(|e| e.to_string())?.bytes() as u64;
    if total.saturating_sub(start) < need {
        return Err(format!(
            "short file: {} bytes of data, the shape needs {need}",
            total.saturating_sub(start)
        ));
    }
    Ok((reader, header))
}

/// The values of a `.npy` file whose header matches `shape`. The shape is the file's word, so
/// its bytes are admitted against the host ([`hadron::admission::admit_host`]) and reserved
/// fallibly before anything is read.
fn read_npy(path: &str, shape: &NodeShape) -> Result<Vec<Complex64>, String> {
    let (mut reader, header) = npy_header(path, shape)?;
    let layout = shape.layout().map_err(|e| e.to_string())?;
    hadron::admission::admit_host("the node's values", layout.bytes() as u64)
        .map_err(|e| e.to_string())?;
    let big_endian = header.type_descriptor.as_string().map(String::as_str) == Some(">c16");
    hadron::admission::read_complex128(&mut reader, big_endian, layout.elems())
}

/// Writes `node` as a complex128 `.npy` file in C order (for tests and generators).
pub fn write_npy(path: &std::path::Path, node: &HadronNode) -> Result<()> {
    let file = File::create(path).map_err(|e| crate::CorrError::io(path, e))?;
    ndarray_npy::WriteNpyExt::write_npy(node.array(), std::io::BufWriter::new(file))
        .map_err(|e| crate::CorrError::io(path, e))
}

#[cfg(feature = "hdf5")]
mod hdf5_data {
    use hadron::NodeShape;
    use num_complex::Complex64;

    fn dataset(file: &str, name: &str, shape: &NodeShape) -> Result<hdf5::Dataset, String> {
        let f = hdf5::File::open(file).map_err(|e| format!("cannot open: {e}"))?;
        let d = f
            .dataset(name)
            .map_err(|e| format!("no dataset {name}: {e}"))?;
        if d.shape() != shape.array_shape() {
            return Err(format!(
                "dataset {name}: expected shape {:?}, found {:?}",
                shape.array_shape(),
                d.shape()
            ));
        }
        Ok(d)
    }

    pub(super) fn check(file: &str, name: &str, shape: &NodeShape) -> Result<(), String> {
        let d = dataset(file, name, shape)?;
        let t = d.dtype().map_err(|e| e.to_string())?;
        if !t.is::<Complex64>() {
            return Err(format!(
                "dataset {name}: expected complex128 (compound r, i of float64)"
            ));
        }
        Ok(())
    }

    pub(super) fn read(
        file: &str,
        name: &str,
        shape: &NodeShape,
    ) -> Result<Vec<Complex64>, String> {
        check(file, name, shape)?;
        let d = dataset(file, name, shape)?;
        d.read_raw::<Complex64>()
            .map_err(|e| format!("dataset {name}: {e}"))
    }
}

#[cfg(not(feature = "hdf5"))]
mod hdf5_data {
    use hadron::NodeShape;
    use num_complex::Complex64;

    const OFF: &str = "HDF5 node data needs memhc built with the `hdf5` feature";

    pub(super) fn check(_: &str, _: &str, _: &NodeShape) -> Result<(), String> {
        Err(OFF.into())
    }

    pub(super) fn read(_: &str, _: &str, _: &NodeShape) -> Result<Vec<Complex64>, String> {
        Err(OFF.into())
    }
}
