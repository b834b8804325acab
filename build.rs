//! Generates the `ommx.v1` Rust types from proto/ with protox (a pure-Rust
//! protobuf compiler), so no system `protoc` is needed. Output goes to OUT_DIR.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/ommx/v1/function.proto",
        "proto/ommx/v1/decision_variables.proto",
        "proto/ommx/v1/constraint.proto",
        "proto/ommx/v1/instance.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    prost_build::Config::new()
        .btree_map(["."])
        .compile_fds(descriptors)?;
    Ok(())
}
