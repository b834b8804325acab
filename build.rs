//! Generates the `ommx.v1` and `ommx.v2` Rust types from proto/ with protox (a
//! pure-Rust protobuf compiler), so no system `protoc` is needed. Output goes to
//! OUT_DIR. v2 refers to v1's messages (Function, Bound, ...) through
//! `crate::ommx_v1`, so the two packages are generated in two passes.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let v1 = [
        "proto/ommx/v1/function.proto",
        "proto/ommx/v1/decision_variables.proto",
        "proto/ommx/v1/constraint.proto",
        "proto/ommx/v1/instance.proto",
    ];
    let v2 = [
        "proto/ommx/v2/common.proto",
        "proto/ommx/v2/constraint.proto",
        "proto/ommx/v2/instance.proto",
    ];
    for file in v1.iter().chain(&v2) {
        println!("cargo:rerun-if-changed={file}");
    }
    prost_build::Config::new()
        .btree_map(["."])
        .compile_fds(protox::compile(v1, ["proto"])?)?;
    prost_build::Config::new()
        .btree_map(["."])
        .extern_path(".ommx.v1", "crate::ommx_v1")
        .compile_fds(protox::compile(v2, ["proto"])?)?;
    Ok(())
}
