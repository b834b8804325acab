//! Hostile, broken and hazardous inputs and outputs (issue 7).
//!
//! - Every error kind in the error catalogue (docs/errors.md) has a case here that
//!   produces it through the real binary; the catalogue and the cases are
//!   checked against each other, and every case runs with its peak memory
//!   measured.
//! - A sweep of truncations and single-byte corruptions of small fixtures
//!   runs in-process and must end, within a time bound, in an error or a
//!   profile, never a panic.
//! - Archive hygiene: names that climb out, absolute names, links, devices
//!   and duplicates; nothing is ever written outside the output file.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use prost::Message;
use serde_json::json;
use sha2::{Digest, Sha256};

mod commands;
mod hostile;

use super::{fails, fixtures, gzip, memprof, oracle, pb_files};
use memprof::input::{self as decode, Limits, Selection};
use memprof::ommx_v1 as pb;

const INSTANCE: &str = "application/org.ommx.v1.instance";

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn blob_name(bytes: &[u8]) -> String {
    format!("blobs/sha256/{}", sha(bytes))
}

fn descriptor(media_type: &str, bytes: &[u8]) -> serde_json::Value {
    json!({"mediaType": media_type, "digest": format!("sha256:{}", sha(bytes)), "size": bytes.len()})
}

fn manifest_with(layers: serde_json::Value) -> Vec<u8> {
    json!({
        "schemaVersion": 2,
        "artifactType": "application/org.ommx.v1.artifact",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json",
                   "digest": format!("sha256:{}", sha(b"{}")), "size": 2},
        "layers": layers,
    })
    .to_string()
    .into_bytes()
}

fn index_with(manifests: serde_json::Value) -> Vec<u8> {
    json!({"schemaVersion": 2, "manifests": manifests})
        .to_string()
        .into_bytes()
}

/// The files of a valid layout holding `instance` as its one layer:
/// (index.json, manifest, instance), each as (name, bytes).
fn layout(instance: &[u8]) -> [(String, Vec<u8>); 3] {
    let manifest = manifest_with(json!([descriptor(INSTANCE, instance)]));
    let index = index_with(json!([descriptor(
        "application/vnd.oci.image.manifest.v1+json",
        &manifest
    )]));
    [
        ("index.json".to_string(), index),
        (blob_name(&manifest), manifest),
        (blob_name(instance), instance.to_vec()),
    ]
}

fn small_instance() -> Vec<u8> {
    fs::read(oracle("obj_linear.pb")).unwrap()
}

/// A tar built header by hand: any name, any entry type (tar's Builder
/// refuses the names these tests need).
#[derive(Default)]
struct RawTar(Vec<u8>);

impl RawTar {
    fn entry(mut self, name: &str, kind: u8, link: &str, data: &[u8]) -> Self {
        let mut header = tar::Header::new_gnu();
        {
            let gnu = header.as_gnu_mut().unwrap();
            gnu.name[..name.len()].copy_from_slice(name.as_bytes());
            gnu.linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        header.set_entry_type(tar::EntryType::new(kind));
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        self.0.extend_from_slice(header.as_bytes());
        self.0.extend_from_slice(data);
        self.0.resize(self.0.len().next_multiple_of(512), 0);
        self
    }

    fn file(self, name: &str, data: &[u8]) -> Self {
        self.entry(name, b'0', "", data)
    }

    fn files(self, files: &[(String, Vec<u8>)]) -> Self {
        files
            .iter()
            .fold(self, |t, (name, data)| t.file(name, data))
    }

    fn finish(mut self) -> Vec<u8> {
        self.0.extend_from_slice(&[0; 1024]);
        self.0
    }
}

/// A gzip stream of `header` followed by `zeros_mib` MiB of zeros, made of
/// concatenated members so that a gigabyte costs the test almost nothing.
fn gzip_bomb(header: &[u8], zeros_mib: usize) -> Vec<u8> {
    let mut out = gzip(header);
    let member = gzip(&vec![0u8; 1 << 20]);
    for _ in 0..zeros_mib {
        out.extend_from_slice(&member);
    }
    out
}

// ---------------------------------------------------------------------------
// The error catalogue: one or more cases per kind, run through the binary.

/// What a case expects.
enum Expect {
    /// Exit 2 with one line `memprof: error: ...` containing these.
    Error(&'static str),
    /// Exit 2 with clap's usage error, on its lines under `memprof: error: `.
    Usage(&'static str),
    /// Exit 0: a hostile input that is still a valid artifact.
    Profile,
}

/// Writes a case's files into the directory and returns the arguments.
type Setup = Box<dyn Fn(&Path) -> Vec<String>>;

struct Case {
    /// The catalogue kind the case produces (`None` for `Expect::Profile`).
    kind: Option<&'static str>,
    name: &'static str,
    /// Writes the case's files into the directory and returns the arguments.
    setup: Setup,
    stdin: Option<Vec<u8>>,
    /// RLIMIT_FSIZE for the child (bytes).
    fsize_limit: Option<u64>,
    expect: Expect,
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

fn inspect(path: String, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["inspect".to_string(), path, "-f".into(), "folded".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A case reading one file with these bytes.
fn file_case(
    kind: &'static str,
    name: &'static str,
    bytes: Vec<u8>,
    extra: &'static [&'static str],
    expect: Expect,
) -> Case {
    Case {
        kind: Some(kind),
        name,
        setup: Box::new(move |dir| inspect(write(dir, name, &bytes), extra)),
        stdin: None,
        fsize_limit: None,
        expect,
    }
}

/// A hostile-looking file that OMMX 2.9.3 reads, so memprof profiles it.
fn accepted_case(
    name: &'static str,
    bytes: Vec<u8>,
    extra: &'static [&'static str],
    expect: Expect,
) -> Case {
    Case {
        kind: None,
        ..file_case("", name, bytes, extra, expect)
    }
}

fn err_case(kind: &'static str, name: &'static str, bytes: Vec<u8>, needle: &'static str) -> Case {
    file_case(kind, name, bytes, &[], Expect::Error(needle))
}

/// A case reading an OCI layout directory built by `build`.
fn dir_case(
    kind: &'static str,
    name: &'static str,
    build: impl Fn(&Path) + 'static,
    needle: &'static str,
) -> Case {
    Case {
        kind: Some(kind),
        name,
        setup: Box::new(move |dir| {
            let root = dir.join(name);
            fs::create_dir_all(&root).unwrap();
            build(&root);
            inspect(root.to_str().unwrap().to_string(), &[])
        }),
        stdin: None,
        fsize_limit: None,
        expect: Expect::Error(needle),
    }
}

fn encode(instance: pb::Instance) -> Vec<u8> {
    instance.encode_to_vec()
}

fn constant(value: f64) -> Option<pb::Function> {
    Some(pb::Function {
        function: Some(pb::function::Function::Constant(value)),
    })
}

fn cases() -> Vec<Case> {
    let instance = small_instance();
    let [index, manifest, blob] = layout(&instance);
    let valid_tar = RawTar::default()
        .files(&[index.clone(), manifest.clone(), blob.clone()])
        .finish();
    let manifest_descriptor = descriptor("application/vnd.oci.image.manifest.v1+json", &manifest.1);
    // An archive whose layout files are given, around the valid blobs.
    let with_index = |index: Vec<u8>| {
        RawTar::default()
            .file("index.json", &index)
            .files(&[manifest.clone(), blob.clone()])
            .finish()
    };
    let with_layers = |layers: serde_json::Value, extra: &[(String, Vec<u8>)]| {
        let manifest = manifest_with(layers);
        let index = index_with(json!([descriptor(
            "application/vnd.oci.image.manifest.v1+json",
            &manifest
        )]));
        RawTar::default()
            .file("index.json", &index)
            .file(&blob_name(&manifest), &manifest)
            .files(extra)
            .finish()
    };
    let kitchen = fs::read(oracle("kitchen_sink.pb")).unwrap();
    let mut bad_crc = gzip(&kitchen);
    let crc_at = bad_crc.len() - 8;
    bad_crc[crc_at] ^= 0xff;
    let mut bad_checksum_tar = valid_tar.clone();
    // The second header's checksum field.
    let second = index.1.len().next_multiple_of(512) + 512;
    bad_checksum_tar[second + 148] ^= 0x07;
    let mut tampered = blob.clone();
    *tampered.1.last_mut().unwrap() ^= 1;
    let past_end = {
        let mut header = tar::Header::new_gnu();
        header.set_path("blobs/sha256/huge").unwrap();
        header.set_size(1 << 40);
        header.set_mode(0o644);
        header.set_cksum();
        let mut bytes = header.as_bytes().to_vec();
        bytes.extend_from_slice(&[0u8; 512]);
        bytes
    };
    let bomb_header = {
        let mut header = tar::Header::new_gnu();
        header.set_path("blobs/sha256/bomb").unwrap();
        header.set_size(1 << 40);
        header.set_mode(0o644);
        header.set_cksum();
        header.as_bytes().to_vec()
    };
    let many_entries = (0..=16_384)
        .fold(RawTar::default(), |t, i| t.file(&format!("e{i}"), b""))
        .finish();
    let many_layers: Vec<serde_json::Value> = (0..=4096)
        .map(|_| descriptor(INSTANCE, &instance))
        .collect();
    let many_manifests: Vec<serde_json::Value> =
        (0..=256).map(|_| manifest_descriptor.clone()).collect();
    let huge_sizes = json!([
        {"mediaType": INSTANCE, "digest": format!("sha256:{}", "1".repeat(64)), "size": u64::MAX - 1},
        {"mediaType": INSTANCE, "digest": format!("sha256:{}", "2".repeat(64)), "size": u64::MAX - 1},
    ]);
    // A constraint whose body nests protobuf groups far deeper than any
    // decoder should recurse.
    let deep_groups = {
        // Field 10, start group, over and over.
        let body = vec![0x53u8; 5000];
        let mut bytes = vec![0x22];
        bytes.extend(varint(body.len() as u64));
        bytes.extend(body);
        bytes
    };
    let no_removed_constraint = encode(pb::Instance {
        objective: constant(0.0),
        removed_constraints: vec![pb::RemovedConstraint::default()],
        ..Default::default()
    });
    let duplicate_named = encode(pb::Instance {
        objective: constant(0.0),
        named_functions: vec![
            pb::NamedFunction {
                id: 1,
                function: constant(1.0),
                ..Default::default()
            },
            pb::NamedFunction {
                id: 1,
                function: constant(2.0),
                ..Default::default()
            },
        ],
        ..Default::default()
    });

    let layout_dir = {
        let files = layout(&instance);
        move |root: &Path, skip: &str| {
            write(root, "oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#);
            for (name, bytes) in &files {
                if name != skip && !(skip == "blobs" && name.starts_with("blobs/")) {
                    write(root, name, bytes);
                }
            }
        }
    };
    let layout_dir2 = layout_dir.clone();
    let layout_dir3 = layout_dir.clone();

    vec![
        // --- arguments
        Case {
            kind: Some("arguments"),
            name: "unknown flag",
            setup: Box::new(|_| vec!["inspect".into(), "x.pb".into(), "--bogus".into()]),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Usage("unexpected argument '--bogus'"),
        },
        Case {
            kind: Some("arguments"),
            name: "bad size",
            setup: Box::new(|_| {
                vec![
                    "ls".into(),
                    "x.pb".into(),
                    "--max-decompressed".into(),
                    "lots".into(),
                ]
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Usage("is not a size"),
        },
        // --- reading
        Case {
            kind: Some("io"),
            name: "missing file",
            setup: Box::new(|dir| inspect(dir.join("nope.ommx").to_str().unwrap().into(), &[])),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error("cannot read: No such file or directory"),
        },
        err_case("empty", "empty.pb", Vec::new(), "the input is empty"),
        err_case(
            "wrong-kind",
            "image.ommx",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(),
            "not an OMMX instance or archive: the content looks like a PNG image",
        ),
        Case {
            kind: Some("wrong-kind"),
            name: "stdin",
            setup: Box::new(|_| inspect("-".into(), &[])),
            stdin: Some(b"[{\"schemaVersion\": 2}]".to_vec()),
            fsize_limit: None,
            expect: Expect::Error("<stdin>: not an OMMX instance or archive: the content looks like JSON text"),
        },
        Case {
            kind: Some("folded-count"),
            name: "folded stacks with a negative count",
            setup: Box::new(|dir| {
                let input = write(dir, "neg.folded", b"Instance.sense 1\na;b -5\n");
                let out = dir.join("out.svg").to_str().unwrap().to_string();
                vec!["flamegraph".into(), input, "-o".into(), out]
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error(
                "neg.folded: folded stacks, line 2: count -5 is not a byte count (a whole number \
                 from 0 to 18446744073709551615)",
            ),
        },
        Case {
            kind: Some("folded-count"),
            name: "folded stacks whose counts overflow",
            setup: Box::new(|dir| {
                let input = write(dir, "sum.folded", b"a 18446744073709551615\nb 1\n");
                let out = dir.join("out.svg").to_str().unwrap().to_string();
                vec!["flamegraph".into(), input, "-o".into(), out]
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error(
                "sum.folded: folded stacks, line 2: the counts add up to more than \
                 18446744073709551615 bytes",
            ),
        },
        err_case(
            "gzip-corrupt",
            "bad.gz",
            vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3],
            "gzip data is corrupt",
        ),
        err_case(
            "gzip-in-gzip",
            "twice.pb.gz.gz",
            gzip(&gzip(&small_instance())),
            "the gzip stream holds another gzip stream: decompress the file once",
        ),
        err_case(
            "empty-tar",
            "empty.tar",
            vec![0; 10240],
            "an empty tar archive: it ends before its first entry",
        ),
        file_case(
            "decompressed-too-large",
            "bomb.pb.gz",
            // An unknown field (20) whose body is a terabyte of zeros, within
            // an element limit raised to let it be read through.
            gzip_bomb(&[0xa2, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20], 64),
            &["--max-decompressed", "8MiB", "--max-element", "2TiB"],
            Expect::Error("gzip data decompresses to more than 8MiB, the --max-decompressed limit"),
        ),
        file_case(
            "decompressed-too-large",
            "bomb.ommx.gz",
            gzip_bomb(&bomb_header, 64),
            &["--max-decompressed", "8MiB"],
            Expect::Error("gzip data decompresses to more than 8MiB, the --max-decompressed limit"),
        ),
        Case {
            kind: Some("stream-too-long"),
            name: "endless stdin",
            setup: Box::new(|_| {
                inspect(
                    "-".into(),
                    &["--max-decompressed", "1MiB", "--max-element", "2TiB"],
                )
            }),
            // An unknown field whose body runs on and on (within an element
            // limit raised to let it be read through).
            stdin: Some(
                [&[0xa2, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20][..], &[0; 2 << 20]].concat(),
            ),
            fsize_limit: None,
            expect: Expect::Error(
                "<stdin>: the input stream is longer than 1MiB, the --max-decompressed limit",
            ),
        },
        // --- archives
        // A plain tar ends at its first damaged header, as in OMMX's reader:
        // what the layout needs is then missing. A gzip-compressed tar (which
        // OMMX does not read at all) must be whole.
        err_case(
            "missing-blob",
            "checksum.ommx",
            bad_checksum_tar.clone(),
            "is missing from the archive",
        ),
        err_case(
            "tar-corrupt",
            "checksum.ommx.gz",
            gzip(&bad_checksum_tar),
            "corrupt tar archive: archive header checksum mismatch",
        ),
        // An entry whose data runs past the end holds what is there, and
        // ends the archive (OMMX reads it so too).
        err_case(
            "no-index",
            "past-end.ommx",
            past_end,
            "the archive has no index.json",
        ),
        err_case(
            "too-many",
            "entries.ommx",
            many_entries,
            "the archive has more than 16384 entries, the limit",
        ),
        err_case(
            "too-many",
            "layers.ommx",
            with_layers(json!(many_layers), std::slice::from_ref(&blob)),
            "the archive has more than 4096 layers, the limit",
        ),
        // OMMX reads only the first manifest an index lists, however many.
        accepted_case(
            "manifests.ommx",
            with_index(index_with(json!(many_manifests))),
            &[],
            Expect::Profile,
        ),
        // OMMX 2.9.3 compares names a component at a time: a leading ./ is
        // one of its own (`tar -cf x.ommx -C dir .` writes such names), while
        // doubled or inner slashes and dots are not.
        err_case(
            "no-index",
            "dot-slash.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone(), blob.clone()].map(|(n, b)| (format!("./{n}"), b)))
                .finish(),
            "the archive has no index.json (not an OCI image layout); entries whose names start \
             with ./ are not the layout's files to OMMX 2.9.3, which refuses this archive too \
             (name them from the layout's root: tar -cf x.ommx -C DIR index.json blobs)",
        ),
        err_case(
            "missing-blob",
            "dot-slash-blob.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone()])
                .file(&format!("./{}", blob.0), &blob.1)
                .finish(),
            "is missing from the archive; entries whose names start with ./ are not",
        ),
        accepted_case(
            "inner-dots.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone()])
                .file(&blob.0.replace("blobs/", "blobs//./"), &blob.1)
                .finish(),
            &[],
            Expect::Profile,
        ),
        err_case(
            "no-index",
            "no-index.ommx",
            RawTar::default().files(&[manifest.clone(), blob.clone()]).finish(),
            "the archive has no index.json",
        ),
        err_case(
            "too-large",
            "big-index.ommx",
            with_index(vec![b' '; (1 << 20) + 1]),
            "index.json is 1048577 bytes, more than the 1048576-byte limit",
        ),
        err_case(
            "too-large",
            "big-manifest.ommx",
            {
                // The size a manifest declares is not trusted (OMMX ignores
                // it): the stored blob is what is capped.
                let big = [&manifest.1[..manifest.1.len() - 1], &vec![b' '; 4 << 20], b"}"].concat();
                RawTar::default()
                    .file("index.json", &index_with(json!([descriptor("application/vnd.oci.image.manifest.v1+json", &big)])))
                    .file(&blob_name(&big), &big)
                    .finish()
            },
            "more than the 4194304-byte limit",
        ),
        err_case(
            "json",
            "not-json.ommx",
            with_index(b"{\"manifests\": [".to_vec()),
            "index.json is not valid JSON of the expected shape",
        ),
        err_case(
            "no-manifest",
            "no-manifest.ommx",
            with_index(index_with(json!([]))),
            "index.json lists no manifest",
        ),
        err_case(
            "json",
            "bad-digest.ommx",
            with_index(index_with(json!([{
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": "sha256:0123", "size": 2,
            }]))),
            "index.json is not valid JSON of the expected shape: digest \"sha256:0123\" has an invalid encoded part",
        ),
        // Any algorithm the OCI grammar allows is a digest, as in OMMX:
        // this one names a blob at blobs/md5/0123, which is not there.
        err_case(
            "missing-blob",
            "md5.ommx",
            with_index(index_with(json!([{
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": "md5:0123", "size": 2,
            }]))),
            "blob md5:0123 is missing from the archive",
        ),
        err_case(
            "not-ommx",
            "not-ommx.ommx",
            {
                let other = json!({
                    "schemaVersion": 2,
                    "config": {"mediaType": "application/vnd.oci.empty.v1+json",
                               "digest": format!("sha256:{}", sha(b"{}")), "size": 2},
                    "layers": [descriptor(INSTANCE, &instance)],
                })
                .to_string()
                .into_bytes();
                RawTar::default()
                    .file("index.json", &index_with(json!([descriptor("application/vnd.oci.image.manifest.v1+json", &other)])))
                    .file(&blob_name(&other), &other)
                    .files(std::slice::from_ref(&blob))
                    .finish()
            },
            "the manifest's artifactType is missing, not application/org.ommx.v1.artifact: not an OMMX artifact",
        ),
        err_case(
            "missing-blob",
            "missing.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone()])
                .finish(),
            "is missing from the archive",
        ),
        err_case(
            "missing-blob",
            "huge-sizes.ommx",
            with_layers(huge_sizes, &[]),
            "is missing from the archive",
        ),
        // OMMX 2.9.3 checks neither a blob's declared size nor its digest:
        // it decodes what is stored under the digest's name. So does memprof.
        accepted_case(
            "size.ommx",
            with_layers(
                json!([{"mediaType": INSTANCE, "digest": format!("sha256:{}", sha(&instance)), "size": instance.len() + 1}]),
                std::slice::from_ref(&blob),
            ),
            &[],
            Expect::Profile,
        ),
        accepted_case(
            "manifest-twice.ommx",
            with_index(index_with(json!([manifest_descriptor.clone(), {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": format!("sha256:{}", sha(&manifest.1)),
                "size": manifest.1.len() + 1,
            }]))),
            &[],
            Expect::Profile,
        ),
        accepted_case(
            "tampered.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone(), tampered])
                .finish(),
            &[],
            Expect::Profile,
        ),
        err_case(
            "not-a-file",
            "symlink-index.ommx",
            RawTar::default()
                .entry("index.json", b'2', &manifest.0, b"")
                .files(&[manifest.clone(), blob.clone()])
                .finish(),
            "index.json is a symbolic link; memprof reads only regular files and never follows links",
        ),
        err_case(
            "not-a-file",
            "symlink-blob.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone()])
                .entry(&blob.0, b'2', "/etc/passwd", b"")
                .finish(),
            "is a symbolic link",
        ),
        err_case(
            "not-a-file",
            "hardlink-blob.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone()])
                .file("data", &blob.1)
                .entry(&blob.0, b'1', "data", b"")
                .finish(),
            "is a hard link",
        ),
        err_case(
            "not-a-file",
            "device-index.ommx",
            RawTar::default()
                .entry("index.json", b'3', "", b"")
                .files(&[manifest.clone(), blob.clone()])
                .finish(),
            "index.json is a character device",
        ),
        err_case(
            "not-a-file",
            "fifo-blob.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone()])
                .entry(&blob.0, b'6', "", b"")
                .finish(),
            "is a FIFO",
        ),
        dir_case(
            "no-oci-layout",
            "dir-extracted-archive",
            // An .ommx archive unpacked: no oci-layout file, which OMMX needs.
            move |root| {
                for (name, bytes) in &layout(&small_instance()) {
                    write(root, name, bytes);
                }
            },
            "the directory has no oci-layout file",
        ),
        dir_case(
            "oci-layout-version",
            "dir-layout-2",
            move |root| {
                write(root, "oci-layout", br#"{"imageLayoutVersion":"2.0.0"}"#);
            },
            "oci-layout declares version \"2.0.0\"; OMMX reads only 1.0.0",
        ),
        dir_case(
            "not-a-file",
            "dir-symlinked-blobs",
            move |root| {
                let real = root.with_extension("real");
                layout_dir(&real, "index.json");
                layout_dir(root, "blobs");
                std::os::unix::fs::symlink(real.join("blobs"), root.join("blobs")).unwrap();
            },
            "blobs is a symbolic link",
        ),
        dir_case(
            "not-a-file",
            "dir-fifo-index",
            move |root| {
                layout_dir2(root, "index.json");
                let path = std::ffi::CString::new(root.join("index.json").to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
            },
            "index.json is a FIFO",
        ),
        dir_case(
            "not-a-file",
            "dir-symlinked-index",
            move |root| {
                layout_dir3(root, "index.json");
                let real = root.with_extension("index.json");
                fs::write(&real, &layout(&small_instance())[0].1).unwrap();
                std::os::unix::fs::symlink(&real, root.join("index.json")).unwrap();
            },
            "index.json is a symbolic link",
        ),
        // OMMX reads the first entry of a name and ignores the others
        // (ArtifactBuilder writes a blob twice when an instance is added
        // twice), and so does memprof, whatever the later ones hold.
        accepted_case(
            "duplicate.ommx",
            RawTar::default()
                .files(&[index.clone(), manifest.clone(), blob.clone(), index.clone()])
                .finish(),
            &[],
            Expect::Profile,
        ),
        accepted_case(
            "duplicate-other.ommx",
            RawTar::default()
                .files(&[
                    index.clone(),
                    manifest.clone(),
                    blob.clone(),
                    (index.0.clone(), b"not json".to_vec()),
                ])
                .finish(),
            &[],
            Expect::Profile,
        ),
        err_case(
            "no-instance-layer",
            "solution.ommx",
            with_layers(
                json!([descriptor("application/org.ommx.v1.solution", b"sol")]),
                &[(blob_name(b"sol"), b"sol".to_vec())],
            ),
            "has no application/org.ommx.v1.instance layer (layers: application/org.ommx.v1.solution)",
        ),
        file_case(
            "layer-out-of-range",
            "one-layer.ommx",
            valid_tar.clone(),
            &["--layer", "3"],
            Expect::Error("--layer 3 is out of range: the input has 1 instance layer"),
        ),
        // --- instances
        err_case(
            "wire-truncated",
            "truncated.pb",
            vec![0x12, 0x7f, 0x08],
            "truncated input: a length-delimited field at byte 1 runs past the end of the data",
        ),
        err_case(
            "wire-malformed",
            "wire-type-7.pb",
            vec![0x0f],
            "malformed protobuf at byte 0: unsupported wire type 7 in tag of field 1",
        ),
        err_case(
            "wire-io",
            "bad-crc.pb.gz",
            bad_crc,
            "read failed at byte",
        ),
        err_case(
            "protobuf-decode",
            "utf8.pb",
            vec![0x12, 0x05, 0x22, 0x03, 0xff, 0xfe, 0xfd],
            "malformed protobuf in decision_variables",
        ),
        err_case(
            "protobuf-decode",
            "deep-groups.pb",
            deep_groups,
            "malformed protobuf in constraints",
        ),
        err_case(
            "wire-type",
            "varint-variable.pb",
            vec![0x10, 0x01],
            "field 2 has wire type Varint, expected Len",
        ),
        err_case(
            "rejected",
            "no-objective.pb",
            fs::read(fixtures().join("rejected/missing_objective.pb")).unwrap(),
            "OMMX 2.9.3 rejects this instance: the objective is missing",
        ),
        err_case(
            "rejected",
            "no-removed-constraint.pb",
            no_removed_constraint,
            "OMMX 2.9.3 rejects this instance: removed constraint entry has no constraint",
        ),
        err_case(
            "rejected",
            "duplicate-named.pb",
            duplicate_named,
            "OMMX 2.9.3 rejects this instance: named function id 1 is defined more than once",
        ),
        file_case(
            "rejected-3.0",
            "one-hot-twice.pb",
            // ommx.v2: binary variable 0, objective 0, minimize, and a one-hot
            // row listing variable 0 twice.
            hex::decode(
                "1a1c0a1a080012160801121209000000000000000011000000000000f03f220909000000000000000030\
                 014a0a0a08080012040a020000",
            )
            .unwrap(),
            &["--schema", "v2"],
            Expect::Error("one-hot constraint 0 lists decision variable 0 more than once"),
        ),
        file_case(
            "rejected-3.0",
            "dependency-basic.pb",
            fs::read(oracle("dependency_basic.pb")).unwrap(),
            &["--accounting", "3.0"],
            Expect::Error("OMMX 3.0.0b7 cannot convert this ommx.v1 instance"),
        ),
        file_case(
            "rejected-3.0",
            "undefined-variable.pb",
            // A rule 3.0's from_v1_bytes shares with 2.9.3: 3.0's verdict.
            fs::read(fixtures().join("rejected/undefined_variable_constraint.pb")).unwrap(),
            &["--accounting", "3.0"],
            Expect::Error(
                "OMMX 3.0.0b7 rejects this instance: constraint 1 uses decision variable 99, \
                 which is not defined",
            ),
        ),
        // --- output
        Case {
            kind: Some("output-is-input"),
            name: "output over input",
            setup: Box::new(|dir| {
                let input = write(dir, "in.pb", &small_instance());
                inspect(input.clone(), &["-o"]).into_iter().chain([input]).collect()
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error("refusing to write the output over the input file"),
        },
        Case {
            kind: Some("outputs-same-file"),
            name: "diff's report and graph in one file",
            setup: Box::new(|dir| {
                let out = dir.join("x.svg").to_str().unwrap().to_string();
                let (a, b) = (oracle("empty.pb"), oracle("kitchen_sink.pb"));
                vec!["diff".into(), a, b, "-o".into(), out.clone(), "--flamegraph".into(), out]
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error(
                "x.svg: two outputs of the command name this file; one would replace the other",
            ),
        },
        Case {
            kind: Some("outputs-same-file"),
            name: "diff's report over the old graph, another spelling",
            setup: Box::new(|dir| {
                let graph = dir.join("x.svg").to_str().unwrap().to_string();
                fs::create_dir(dir.join("sub")).unwrap();
                let out = dir.join("sub/../x.old.svg").to_str().unwrap().to_string();
                let (a, b) = (oracle("empty.pb"), oracle("kitchen_sink.pb"));
                vec!["diff".into(), a, b, "-o".into(), out, "--flamegraph".into(), graph]
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error("x.old.svg: two outputs of the command name this file (also as "),
        },
        Case {
            kind: Some("output-temp"),
            name: "output in a missing directory",
            setup: Box::new(|dir| {
                let input = write(dir, "in.pb", &small_instance());
                let out = dir.join("no/such/dir/out.txt");
                inspect(input, &["-o"]).into_iter().chain([out.to_str().unwrap().into()]).collect()
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error("cannot create a temporary file in"),
        },
        Case {
            kind: Some("output-write"),
            name: "output past the file size limit",
            setup: Box::new(|dir| {
                fs::write(dir.join("out.svg"), "previous").unwrap();
                vec![
                    "flamegraph".into(),
                    oracle("kitchen_sink.pb"),
                    "-o".into(),
                    dir.join("out.svg").to_str().unwrap().into(),
                ]
            }),
            stdin: None,
            fsize_limit: Some(4096),
            expect: Expect::Error("out.svg: write failed:"),
        },
        Case {
            kind: Some("output-rename"),
            name: "output onto a directory",
            setup: Box::new(|dir| {
                let input = write(dir, "in.pb", &small_instance());
                fs::create_dir(dir.join("taken")).unwrap();
                inspect(input, &["-o"]).into_iter().chain([dir.join("taken").to_str().unwrap().into()]).collect()
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Error("cannot move the output into place"),
        },
        // --- hostile but valid: profiled, extra entries ignored
        Case {
            kind: None,
            name: "climbing and absolute names are ignored",
            setup: Box::new({
                let files = [index.clone(), manifest.clone(), blob.clone()];
                move |dir| {
                    let tar = RawTar::default()
                        .file("../../escaped.txt", b"x")
                        .file("/tmp/memprof-hardening-absolute.txt", b"x")
                        .file("./../index.json", b"{}")
                        .entry("blobs/link", b'2', "/etc/passwd", b"")
                        .files(&files)
                        .finish();
                    inspect(write(dir, "noise.ommx", &tar), &[])
                }
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Profile,
        },
        Case {
            kind: None,
            name: "a layer listed many times is read once",
            setup: Box::new({
                let instance = instance.clone();
                let blob = blob.clone();
                move |dir| {
                    let layers: Vec<_> = (0..4096).map(|_| descriptor(INSTANCE, &instance)).collect();
                    let manifest = manifest_with(json!(layers));
                    let index = index_with(json!([descriptor(
                        "application/vnd.oci.image.manifest.v1+json",
                        &manifest
                    )]));
                    let tar = RawTar::default()
                        .file("index.json", &index)
                        .file(&blob_name(&manifest), &manifest)
                        .files(std::slice::from_ref(&blob))
                        .finish();
                    inspect(write(dir, "repeated.ommx", &tar), &["--layer", "4095"])
                }
            }),
            stdin: None,
            fsize_limit: None,
            expect: Expect::Profile,
        },
    ]
}

fn varint(mut value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// Runs the binary, returning (exit code, stdout, stderr, peak RSS in KiB)
/// of that child alone, measured by wait4.
fn run_measured(
    args: &[String],
    cwd: &Path,
    stdin: Option<&[u8]>,
    fsize_limit: Option<u64>,
) -> (Option<i32>, Vec<u8>, String, i64) {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("stdout");
    let err_path = dir.path().join("stderr");
    let in_path = dir.path().join("stdin");
    fs::write(&in_path, stdin.unwrap_or_default()).unwrap();
    // Measured from a small process of its own: Linux carries a parent's
    // memory high-water mark into every child it forks and execs, so a child
    // spawned from this test process (large, and shared with the tests
    // running beside this one) would report at least this process's own
    // peak. The reaper, this binary re-run on one ignored test, spawns
    // memprof and reports what wait4 measured of it.
    let spec = dir.path().join("spec.json");
    let result = dir.path().join("result");
    let spec_json = serde_json::json!({
        "args": args,
        "cwd": cwd,
        "stdin": in_path,
        "stdout": out_path,
        "stderr": err_path,
        "fsize_limit": fsize_limit,
        "result": result,
    });
    fs::write(&spec, spec_json.to_string()).unwrap();
    let reaper = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hardening::peak_rss_reaper",
            "--ignored",
            "--quiet",
            "--test-threads=1",
        ])
        .env("MEMPROF_REAPER_SPEC", &spec)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(
        reaper.status.success(),
        "the reaper failed: {}",
        String::from_utf8_lossy(&reaper.stdout)
    );
    let measured = fs::read_to_string(&result).unwrap();
    let (code, peak) = measured.split_once(' ').unwrap();
    (
        code.parse().ok(),
        fs::read(&out_path).unwrap(),
        fs::read_to_string(&err_path).unwrap(),
        peak.parse().unwrap(),
    )
}

/// The small process [`run_measured`] measures memprof from: runs the
/// command its spec file describes and writes `EXIT PEAK_KIB` (`-` for a
/// signal) to the spec's result file.
#[test]
#[ignore = "run in a child process by run_measured"]
fn peak_rss_reaper() {
    let Some(spec) = std::env::var_os("MEMPROF_REAPER_SPEC") else {
        return;
    };
    let spec: serde_json::Value = serde_json::from_slice(&fs::read(spec).unwrap()).unwrap();
    let path = |key: &str| std::path::PathBuf::from(spec[key].as_str().unwrap());
    let args: Vec<String> = serde_json::from_value(spec["args"].clone()).unwrap();
    let fsize_limit = spec["fsize_limit"].as_u64();
    let (cwd, in_path, out_path, err_path) =
        (path("cwd"), path("stdin"), path("stdout"), path("stderr"));
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("memprof"));
    command
        .args(args)
        .current_dir(cwd)
        .stdin(File::open(&in_path).unwrap())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap());
    if let Some(limit) = fsize_limit {
        unsafe {
            command.pre_exec(move || {
                // Past the limit a write fails with EFBIG instead of killing.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let rlimit = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    // Reaped below by wait4, which also reports its peak memory.
    #[allow(clippy::zombie_processes)]
    let child = command.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let code = code.map_or("-".to_string(), |c| c.to_string());
    fs::write(path("result"), format!("{code} {}", usage.ru_maxrss)).unwrap();
}

/// The kinds listed in the error catalogue of docs/errors.md, in order.
fn catalogue_kinds() -> Vec<String> {
    let page =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/errors.md")).unwrap();
    let start = page
        .find("\n## Error catalogue")
        .expect("docs/errors.md has an \"Error catalogue\" section");
    let end = page
        .find("\n## Limits")
        .expect("docs/errors.md has a \"Limits\" section after the catalogue");
    let section = &page[start..end];
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(kind, _)| kind.to_string())
        .collect()
}

/// Peak memory any case may use: the binary, its buffers and one small
/// instance, nowhere near what the hostile inputs claim or decompress to.
const RSS_BOUND_KIB: i64 = 64 * 1024;

#[test]
fn every_catalogued_error_is_produced_and_every_case_stays_small() {
    let mut cases = cases();
    cases.extend(commands::cases());
    cases.extend(hostile::cases());
    let catalogue: BTreeSet<String> = catalogue_kinds().into_iter().collect();
    let covered: BTreeSet<String> = cases
        .iter()
        .filter_map(|c| c.kind)
        .map(String::from)
        .collect();
    assert_eq!(
        catalogue, covered,
        "docs/errors.md's error catalogue and the cases here must list the same kinds"
    );

    let mut failures = Vec::new();
    let mut peak = (0, "");
    for case in &cases {
        let dir = tempfile::tempdir().unwrap();
        let args = (case.setup)(dir.path());
        // Run two levels down, so that a name climbing out with ../.. would
        // still land inside the watched directory.
        let cwd = dir.path().join("work/here");
        fs::create_dir_all(&cwd).unwrap();
        let before = tree(dir.path());
        let started = Instant::now();
        let (code, stdout, stderr, rss) =
            run_measured(&args, &cwd, case.stdin.as_deref(), case.fsize_limit);
        let elapsed = started.elapsed();
        let mut problems = Vec::new();
        match &case.expect {
            Expect::Error(needle) => {
                if code != Some(2) {
                    problems.push(format!("exit {code:?}, expected 2"));
                }
                if !stdout.is_empty() {
                    problems.push("data on stdout".into());
                }
                if stderr.lines().count() != 1 || !stderr.starts_with("memprof: error: ") {
                    problems.push(format!("not one error line: {stderr:?}"));
                }
                if !stderr.contains(needle) {
                    problems.push(format!("{stderr:?} lacks {needle:?}"));
                }
            }
            Expect::Usage(needle) => {
                if code != Some(2)
                    || !stderr.starts_with("memprof: error: ")
                    || !stderr.contains(needle)
                    || stderr.lines().count() < 2
                {
                    problems.push(format!("exit {code:?}, stderr {stderr:?}"));
                }
            }
            Expect::Profile => {
                if code != Some(0) || stdout.is_empty() {
                    problems.push(format!("exit {code:?}, stderr {stderr:?}"));
                }
                // Nothing was extracted: the directory holds what it did.
                if tree(dir.path()) != before {
                    problems.push("files appeared beside the input".into());
                }
            }
        }
        peak = peak.max((rss, case.name));
        if rss > RSS_BOUND_KIB {
            problems.push(format!("peak RSS {rss} KiB"));
        }
        if elapsed > Duration::from_secs(20) {
            problems.push(format!("took {elapsed:?}"));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{} ({:?}): {}",
                case.name,
                case.kind,
                problems.join("; ")
            ));
        }
    }
    println!(
        "{} cases; highest peak RSS {} KiB ({})",
        cases.len(),
        peak.0,
        peak.1
    );
    assert!(
        !Path::new("/tmp/memprof-hardening-absolute.txt").exists(),
        "an absolute entry name was extracted"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every path under `dir`, for checking that nothing was created.
fn tree(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path.clone());
            }
            out.insert(path);
        }
    }
    out
}

#[test]
fn a_trace_file_never_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let original = fs::read(oracle("kitchen_sink.pb")).unwrap();
    let input = write(dir.path(), "k.pb", &original);
    let budget = write(
        dir.path(),
        "budget.yaml",
        b"rules:\n  - path: total\n    max: 1 MiB\n",
    );
    // Other spellings of the same files: relative to the directory, through
    // a hard link, an input matched by a pattern.
    fs::hard_link(&input, dir.path().join("link.pb")).unwrap();
    for args in [
        vec!["--trace", "./k.pb", "inspect", "k.pb"],
        vec!["--trace", "link.pb", "top", "k.pb"],
        vec!["--trace", "k.pb", "inspect", "*.pb"],
        vec!["--trace", "k.pb", "diff", "link.pb", "link.pb"],
        vec![
            "--trace",
            "budget.yaml",
            "check",
            "k.pb",
            "--budget",
            "budget.yaml",
        ],
    ] {
        let out = memprof()
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.ends_with("refusing to write the output over the input file\n"),
            "{args:?}: {stderr}"
        );
        assert_eq!(fs::read(&input).unwrap(), original, "{args:?}");
    }
    assert!(fs::read_to_string(&budget).unwrap().starts_with("rules:"));
}

#[test]
fn a_write_failing_mid_render_keeps_the_previous_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.svg");
    fs::write(&out, "previous").unwrap();
    let args: Vec<String> = vec![
        "flamegraph".into(),
        oracle("kitchen_sink.pb"),
        "-o".into(),
        out.to_str().unwrap().into(),
    ];
    let (code, _, stderr, _) = run_measured(&args, dir.path(), None, Some(4096));
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "previous");
    assert_eq!(
        tree(dir.path()).len(),
        1,
        "no temporary file left: {stderr}"
    );
    // Without the limit the same command succeeds and replaces the file.
    let (code, _, stderr, _) = run_measured(&args, dir.path(), None, None);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(fs::read_to_string(&out).unwrap().starts_with("<?xml"));
}

#[test]
fn the_default_decompression_limit_is_the_documented_one() {
    use clap::Parser;
    let cli = memprof::cli::Cli::parse_from(["memprof", "inspect", "x.pb"]);
    let memprof::cli::Command::Inspect(args) = cli.command else {
        panic!("inspect parses as inspect");
    };
    assert_eq!(
        args.common.limits.max_decompressed,
        memprof::input::limits::DEFAULT_MAX_DECOMPRESSED
    );
    assert_eq!(Limits::default().max_decompressed, 4 << 30);
}

#[test]
fn the_decompression_limit_is_exact_and_applies_to_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let raw = fs::read(oracle("kitchen_sink.pb")).unwrap();
    let path = write(dir.path(), "k.pb.gz", &gzip(&raw));
    let exact = raw.len().to_string();
    let below = (raw.len() - 1).to_string();
    let want = super::ok(&["inspect", &oracle("kitchen_sink.pb"), "-f", "folded"]);
    assert_eq!(
        super::ok(&[
            "inspect",
            &path,
            "-f",
            "folded",
            "--max-decompressed",
            &exact
        ]),
        want
    );
    let err = fails(&["inspect", &path, "--max-decompressed", &below]);
    assert!(err.contains(&format!("more than {below} bytes")), "{err}");
    let out = memprof()
        .args(["inspect", "-", "--max-decompressed", "64KiB"])
        .write_stdin(gzip_bomb(&[0xa2, 0x01, 0xff, 0xff, 0x03], 4))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("<stdin>: gzip data decompresses to more than 64KiB"),
        "{stderr}"
    );
}

fn mkfifo(path: &Path) {
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_pipe_named_as_the_input_is_read_as_a_stream() {
    // As with `memprof inspect <(zcat problem.ommx.gz)`: a FIFO cannot seek.
    let dir = tempfile::tempdir().unwrap();
    for name in ["kitchen_sink.pb", "multi.ommx"] {
        let fifo = dir.path().join(name);
        mkfifo(&fifo);
        let bytes = fs::read(oracle(name)).unwrap();
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::write(fifo, bytes).unwrap())
        };
        let got = super::ok(&["inspect", fifo.to_str().unwrap(), "-f", "folded"]);
        writer.join().unwrap();
        assert_eq!(
            got,
            super::ok(&["inspect", &oracle(name), "-f", "folded"]),
            "{name}"
        );
    }
}

#[test]
fn an_endless_pipe_is_stopped_at_the_limit() {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("memprof"))
        // The element limit raised past the claim below, so that the stream
        // is read until its own limit stops it (by default the claim is
        // refused at once: tests/cli/edges.rs).
        .args([
            "inspect",
            "-",
            "--max-decompressed",
            "4MiB",
            "--max-element",
            "2TiB",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // A decision variable (field 2) whose declared body never ends.
        let _ = stdin.write_all(&[0x12, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
        let zeros = vec![0u8; 1 << 16];
        while stdin.write_all(&zeros).is_ok() {}
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("<stdin>: the input stream is longer than 4MiB"),
        "{stderr}"
    );
}

#[test]
fn every_rejected_model_error_has_a_fixture_or_a_case() {
    // memprof's messages on the rejected fixtures, with the "rejected" cases
    // above, reach every ModelError variant.
    let bar = indicatif::ProgressBar::hidden();
    let mut messages: Vec<String> = pb_files("rejected")
        .into_iter()
        .map(|p| {
            let input = decode::Input::Path(p);
            memprof::input::read_plain(&input, Selection::All, &bar)
                .unwrap_err()
                .to_string()
        })
        .collect();
    messages.push("removed constraint entry has no constraint".into());
    messages.push("named function id 1 is defined more than once".into());
    // An integer variable whose bound holds no integer.
    let no_integer = pb::Instance {
        decision_variables: vec![pb::DecisionVariable {
            id: 1,
            kind: pb::decision_variable::Kind::Integer as i32,
            bound: Some(pb::Bound {
                lower: 1.1,
                upper: 1.9,
            }),
            ..Default::default()
        }],
        objective: Some(pb::Function {
            function: Some(pb::function::Function::Constant(1.0)),
        }),
        ..Default::default()
    };
    let path = tempfile::NamedTempFile::new().unwrap();
    fs::write(path.path(), no_integer.encode_to_vec()).unwrap();
    let input = decode::Input::Path(path.path().to_path_buf());
    messages.push(
        memprof::input::read_plain(&input, Selection::All, &bar)
            .unwrap_err()
            .to_string(),
    );
    let fragments = [
        "has no constant, linear, quadratic or polynomial part",
        "which OMMX rejects (coefficients must be finite)",
        "the three lists must have the same length",
        "has unknown or unspecified kind",
        "has unknown or unspecified equality",
        "has no function",
        "removed constraint entry has no constraint",
        "has an invalid bound",
        "inconsistent with its kind and bound",
        "the objective is missing",
        "newer than ommx.v1",
        "decision variable id",
        "constraint id",
        "named function id",
        "decision_variable_dependency assigns variable",
        "which is not defined",
        "refers to constraint",
        "lists decision variable",
        "lists constraint",
        "is cyclic",
        "uses the reserved prefix",
        "is an expression (the `expression` arm",
        "is integer with bound [1.1, 1.9], which holds no value of that kind",
    ];
    for fragment in fragments {
        assert!(
            messages.iter().any(|m| m.contains(fragment)),
            "no rejected fixture or case says {fragment:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// The corruption sweep, in-process.

/// A reused temporary file for inputs that must be files (archives seek).
struct Scratch(File);

impl Scratch {
    fn new() -> Self {
        Self(tempfile::tempfile().unwrap())
    }

    fn read(&mut self, bytes: &[u8]) -> Result<decode::ProfiledInput, decode::DecodeError> {
        self.0.set_len(0).unwrap();
        self.0.seek(SeekFrom::Start(0)).unwrap();
        self.0.write_all(bytes).unwrap();
        let limits = Limits {
            max_decompressed: 1 << 20,
            ..Limits::default()
        };
        let bar = indicatif::ProgressBar::hidden();
        decode::read_file(
            self.0.try_clone().unwrap(),
            "sweep".into(),
            Selection::All,
            &limits,
            &mut memprof::pass::Pass::new(&mut ()),
            &bar,
        )
    }
}

fn profile_raw(bytes: &[u8], known_length: bool) -> Result<(), String> {
    let total = known_length.then_some(bytes.len() as u64);
    let options = memprof::pass::ProfileOptions {
        group_by: memprof::profile::family::GroupBy::Name,
        wire: true,
        ..memprof::pass::ProfileOptions::default()
    };
    let mut accounts = memprof::pass::Accounts::new(options);
    memprof::pass::profile_instance(bytes, total, &mut accounts, &mut ())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The mutations of one input: every truncation, then every byte flipped
/// (xor 0xff) and replaced by one more value, taken in turn from a few
/// chosen to hit varints (0x80, 0x7f), tags and lengths (0x00) and plain
/// bit damage (xor 0x01).
fn mutations(bytes: &[u8]) -> impl Iterator<Item = (String, Vec<u8>)> + '_ {
    let cuts = (0..bytes.len()).map(|cut| (format!("cut at {cut}"), bytes[..cut].to_vec()));
    let changes = (0..bytes.len()).flat_map(move |at| {
        let old = bytes[at];
        let other = [0x80, 0x00, old ^ 0x01, 0x7f][at % 4];
        [old ^ 0xff, other]
            .into_iter()
            .filter(move |&new| new != old)
            .map(move |new| {
                let mut changed = bytes.to_vec();
                changed[at] = new;
                (format!("byte {at} {old:#04x} -> {new:#04x}"), changed)
            })
    });
    cuts.chain(changes)
}

/// Runs `check` on the mutations that are this sweeper's share (every
/// `share.1`-th, from the `share.0`-th), catching panics; returns how many
/// ran.
fn sweep(
    label: &str,
    bytes: &[u8],
    share: (usize, usize),
    mut check: impl FnMut(&[u8]),
    panics: &mut Vec<String>,
) -> usize {
    let mut runs = 0;
    for (what, mutated) in mutations(bytes).skip(share.0).step_by(share.1) {
        runs += 1;
        if catch_unwind(AssertUnwindSafe(|| check(&mutated))).is_err() {
            panics.push(format!("{label}: {what}"));
        }
    }
    runs
}

/// The sweep itself. It runs in a child process (started by the test
/// below) so that a hang can be ended by killing it, with the decoder on one
/// thread (`MEMPROF_THREADS=1`): tens of thousands of tiny inputs would
/// otherwise spend their time starting threads. Both modes give the same
/// results (tests/cli/main.rs checks that on every fixture).
#[test]
#[ignore = "run in a child process by every_truncation_and_byte_corruption_fails_cleanly_or_profiles"]
fn corruption_sweep_worker() {
    // Raw instances as files (length known) and, cut short, as streams;
    // an archive and a gzip-compressed instance through the whole read
    // path, sniffing included.
    let mut raw = Vec::new();
    for path in pb_files("oracle") {
        let bytes = fs::read(&path).unwrap();
        if bytes.len() <= 1024 {
            raw.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                bytes,
            ));
        }
    }
    let files = [
        (
            "single.ommx".to_string(),
            fs::read(oracle("single.ommx")).unwrap(),
        ),
        (
            "kitchen_sink.pb.gz".to_string(),
            gzip(&fs::read(oracle("kitchen_sink.pb")).unwrap()),
        ),
    ];
    // Two sweepers, one per core, each taking every other mutation.
    let sweepers = 2;
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..sweepers)
            .map(|k| {
                let (raw, files) = (&raw, &files);
                scope.spawn(move || {
                    let mut panics = Vec::new();
                    let mut runs = 0;
                    let mut scratch = Scratch::new();
                    for (label, bytes) in raw {
                        runs += sweep(
                            label,
                            bytes,
                            (k, sweepers),
                            |b| {
                                let known = profile_raw(b, true);
                                // A cut changes what a known length allows;
                                // the stream, not knowing it, must come to
                                // the same verdict.
                                if b.len() < bytes.len() {
                                    assert_eq!(
                                        known,
                                        profile_raw(b, false),
                                        "file and stream agree"
                                    );
                                }
                            },
                            &mut panics,
                        );
                    }
                    for (label, bytes) in files {
                        let read = |b: &[u8]| drop(scratch.read(b));
                        runs += sweep(label, bytes, (k, sweepers), read, &mut panics);
                    }
                    (runs, panics)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let runs: usize = results.iter().map(|(r, _)| r).sum();
    let panics: Vec<String> = results.into_iter().flat_map(|(_, p)| p).collect();
    println!("sweep: {runs} mutations, {} panics", panics.len());
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

#[test]
fn every_truncation_and_byte_corruption_fails_cleanly_or_profiles() {
    // A hang never ends; the sweep itself takes about 15 s on an idle
    // 2-core machine. The bound leaves room for a machine shared with other
    // builds (load 10 on 2 cores took over 60 s), so only a hang trips it.
    const BOUND: Duration = Duration::from_secs(300);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "hardening::corruption_sweep_worker",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MEMPROF_THREADS", "1")
        .env("RUST_BACKTRACE", "0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > BOUND {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the corruption sweep did not finish within {BOUND:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs: usize = stdout
        .lines()
        .find_map(|l| l.split_once("sweep: ").map(|(_, rest)| rest))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the worker ran: {stdout}"));
    assert!(runs > 40_000, "only {runs} mutations run");
}
