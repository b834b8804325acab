//! The analysis API as a library user (another surface) calls it.

use memprof::api::{self, Account, Input, Options};

use super::oracle;

/// An artifact handed over as its layers (what the Python wheel does with
/// an `ommx.artifact.Artifact`) profiles as its archive does, layer by
/// layer; the layers that are not instances carry no blob.
#[test]
fn an_artifact_handed_over_as_its_layers_profiles_as_its_archive() {
    let archive = oracle("multi.ommx");
    let options = Options::default();
    let listed = api::layers(&Input::from_arg(&archive), &options).unwrap();
    // The blobs, read from the archive's own extraction.
    let dir = tempfile::tempdir().unwrap();
    let untar = std::process::Command::new("tar")
        .arg("-xf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(untar.success());
    let layers = listed
        .layers
        .iter()
        .map(|l| {
            let (algorithm, hex) = l.digest.split_once(':').unwrap();
            let blob = l.instance_index.map(|_| {
                std::fs::read(dir.path().join("blobs").join(algorithm).join(hex)).unwrap()
            });
            api::HandedLayer {
                media_type: l.media_type.clone(),
                digest: l.digest.clone(),
                size: l.size,
                annotations: l.annotations.clone(),
                bytes: blob,
            }
        })
        .collect();
    let artifact = Input::from_artifact("multi", layers).unwrap();
    let folded = |input: &Input, options: &Options| {
        let profiled = api::profile(std::slice::from_ref(input), options).unwrap();
        profiled
            .profile(Account::Memory)
            .aggregate
            .folded_lines()
            .into_iter()
            .map(|(p, b)| format!("{p} {b}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        folded(&artifact, &options),
        folded(&Input::from_arg(&archive), &options)
    );
    let second = Options {
        layer: Some(1),
        ..Options::default()
    };
    assert_eq!(
        folded(&artifact, &second),
        folded(&Input::from_arg(&archive), &second)
    );
    let listed = api::layers(&artifact, &options).unwrap();
    assert_eq!(listed.layers.len(), 4);
    assert_eq!(
        listed.layers[3].not_profiled.as_deref(),
        Some("a solution, not an instance")
    );
}
