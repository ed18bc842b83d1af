//! Generates the gRPC code of `proto/` with protox (a protobuf compiler in Rust), so building
//! needs no system `protoc`; only the `distributed` feature has a wire to generate.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "distributed")]
    {
        let proto = "proto/rlgraph/distributed/v1/distributed.proto";
        println!("cargo:rerun-if-changed={proto}");
        let descriptors = protox::compile([proto], ["proto"])?;
        tonic_prost_build::configure().compile_fds(descriptors)?;
    }
    Ok(())
}
