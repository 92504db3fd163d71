//! HDF5 (feature `hdf5`): node data read from a dataset, and correlators written one dataset
//! each, time pairs as the axis, key fields as attributes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed
#![cfg(feature = "hdf5")]

mod common;

use hadron::{HadronNode, NodeShape};
use memhc_corr::{DataSource, load, reference, save};
use num_complex::Complex64;

#[test]
fn nodes_from_hdf5_and_correlators_to_hdf5() {
    let dir = common::scratch("hdf5");
    let shape = NodeShape::meson(2).unwrap();
    let node = HadronNode::random(&shape, 11);
    {
        let f = hdf5::File::create(dir.join("nodes.h5")).unwrap();
        let g = f.create_group("t0").unwrap();
        g.new_dataset::<Complex64>()
            .shape(shape.array_shape())
            .create("b")
            .unwrap()
            .write_raw(node.as_slice())
            .unwrap();
    }
    let mut f = common::shared_file(2);
    f.nodes[1].data = DataSource::Hdf5 {
        file: "nodes.h5".into(),
        dataset: "/t0/b".into(),
    };
    f.correlators[0].keys.insert("irrep".into(), "T1".into());
    save(&f, &dir.join("corr.json")).unwrap();
    let model = load(&dir.join("corr.json")).unwrap();
    assert_eq!(model.nodes[1].values().unwrap(), node);

    let mut bad = f.clone();
    bad.nodes[1].data = DataSource::Hdf5 {
        file: "nodes.h5".into(),
        dataset: "/t0/missing".into(),
    };
    save(&bad, &dir.join("bad.json")).unwrap();
    let e = load(&dir.join("bad.json")).unwrap_err();
    assert!(e.to_string().contains("node b: "), "{e}");

    let c = reference::correlators(&model).unwrap();
    c.write_hdf5(&dir.join("out.h5")).unwrap();
    let out = hdf5::File::open(dir.join("out.h5")).unwrap();
    let ds = out.dataset("C1").unwrap();
    let values: Vec<Complex64> = ds.read_raw().unwrap();
    let want: Vec<Complex64> = c.correlators[0]
        .values
        .iter()
        .map(|v| v.complex())
        .collect();
    assert_eq!(values, want);
    let sources: Vec<i64> = ds.attr("source").unwrap().read_raw().unwrap();
    let sinks: Vec<i64> = ds.attr("sink").unwrap().read_raw().unwrap();
    assert_eq!((sources, sinks), (vec![0, 1], vec![3, 4]));
    let irrep: hdf5::types::VarLenUnicode = ds.attr("irrep").unwrap().read_scalar().unwrap();
    assert_eq!(irrep.as_str(), "T1");
}
