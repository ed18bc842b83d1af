//! The core of rlgraph-rs: the `Backend` trait, the component model, the backend-free meta
//! graph, the three-phase builder, execution plans, the graph executor and `ComponentTest`.

pub mod assembly;
pub mod backend;
pub mod builder;
pub mod checkpoint;
pub mod component;
pub mod component_test;
pub mod convert;
pub mod device_map;
pub mod error;
pub mod executor;
pub mod graph_fn;
pub mod meta_graph;
pub mod multi_gpu;
pub mod plan;
pub mod tree;
pub mod variables;

pub use assembly::{ApiCtx, Args, Op};
pub use backend::{Backend, DType, Device, HostData, HostTensor};
pub use builder::{build, BuildOptions, BuildReport, BuiltGraph};
pub use component::{ApiMethod, Component, InputSpaces, Param};
pub use component_test::{check_close, ComponentTest, Tolerance};
pub use device_map::DeviceMap;
pub use error::{CoreError, Result};
pub use executor::GraphExecutor;
pub use graph_fn::{ContainerMode, GraphFn, InferCtx, KernelCtx};
pub use meta_graph::{MetaGraph, NodeKind};
pub use multi_gpu::MultiGpuSync;
pub use plan::Plan;
pub use rlgraph_spaces as spaces;
pub use tree::Tree;
pub use variables::{Initializer, VarDecl, VarInfo, VariableStore};
