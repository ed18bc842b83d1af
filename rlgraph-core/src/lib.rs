//! The core of rlgraph-rs: the `Backend` trait, the component model, the backend-free meta
//! graph, the three-phase builder, execution plans, the graph executor and `ComponentTest`.
//!
//! Building happens in three phases: (1) composition, where [`Component`]s are plain values
//! nested into a tree; (2) assembly, where every API method of the root runs once on symbolic
//! [`Op`]s and records the [`MetaGraph`]; (3) the build, where input spaces flow through the
//! meta graph, components that learn all their input spaces declare their variables, and every
//! graph function's output spaces are inferred. A [`GraphExecutor`] then compiles each root API
//! method into a flat [`Plan`] and runs it on a [`Backend`].
//!
//! # Example
//!
//! Two components: `double` multiplies by two, `stack` feeds its input through `double` and
//! adds a learned bias.
//!
//! ```
//! use backend_candle::Candle;
//! use rlgraph_core::spaces::{FloatBox, Space, Value};
//! use rlgraph_core::{Backend, ComponentTest, Component, GraphFn, Initializer, Param, VarDecl};
//!
//! fn double<B: Backend>() -> Component<B> {
//!     Component::new("double")
//!         .api("run", vec![Param::new("x")], |ctx, args| ctx.graph_fn("times_two", &[args.get(0)?]))
//!         .graph_fn(GraphFn::tensors("times_two", |_, xs| Ok(vec![B::affine(&xs[0], 2.0, 0.0)?])).infer_same())
//! }
//!
//! fn stack<B: Backend>() -> Component<B> {
//!     Component::new("stack")
//!         .with_sub(double())
//!         .api("run", vec![Param::new("x")], |ctx, args| {
//!             let doubled = ctx.call("double", "run", &[args.get(0)?])?;
//!             ctx.graph_fn("add_bias", &doubled)
//!         })
//!         .variables(|_| Ok(vec![VarDecl::new("bias", [], Initializer::Constant(0.5))]))
//!         .graph_fn(GraphFn::tensors("add_bias", |ctx, xs| Ok(vec![B::add(&xs[0], ctx.var("bias")?)?])).infer_same())
//! }
//!
//! let mut test = ComponentTest::<Candle>::new(stack(), [("x", Space::from(FloatBox::new([])))], 42)?;
//! println!("{}", test.executor().meta_graph().to_dot(None));
//! assert_eq!(test.call("run", &[Value::f32(1.5)])?, vec![Value::f32(3.5)]);
//! # Ok::<(), rlgraph_core::CoreError>(())
//! ```
#![deny(missing_docs)]

pub mod assembly;
pub mod atomic_file;
pub mod backend;
pub mod batching;
pub mod builder;
pub mod checkpoint;
pub mod component;
pub mod component_html;
pub mod component_layout;
pub mod component_test;
pub mod component_view;
pub mod convert;
pub mod device_map;
pub mod erased_executor;
pub mod error;
pub mod executor;
pub mod graph_fn;
pub mod host_allocator;
pub mod host_state;
pub mod meta_graph;
pub mod plan;
pub mod plan_view;
pub mod rng_state;
pub mod runtime_kernels;
pub mod spec_only;
pub mod threads;
pub mod tree;
pub mod variables;

pub use assembly::Op;
pub use atomic_file::{write_atomically, write_private_atomically};
pub use backend::{capture, GraphCapture, Replay};
pub use backend::{
    AdamScalars, AdamStep, AutodiffOps, Backend, BackendCore, BinaryOp, BitOp, BitwiseOps, CmpOp, CompareOps, DType,
    Device, ElementwiseOps, HostData, HostTensor, IndexOps, ModuleOps, OptimizerOps, RandomOps, ReduceOp, ReduceOps,
    ShapeOps, UnaryOp,
};
pub use batching::{stack, unstack};
pub use builder::{build, BuildOptions, BuildReport, BuiltGraph};
pub use component::{ApiCtx, Args};
pub use component::{ApiMethod, Component, InputSpaces, Param};
pub use component_layout::{Layout, Rect};
pub use component_test::{check_close, test_device, ComponentTest, Tolerance};
pub use component_view::{ComponentView, Signature, ViewNode, ViewOptions};
pub use device_map::DeviceMap;
pub use erased_executor::ErasedExecutor;
pub use error::{CoreError, Result};
pub use executor::GraphExecutor;
pub use graph_fn::{ContainerMode, GraphFn, InferCtx, KernelCtx};
pub use host_state::{HostState, SavedState};
pub use meta_graph::{MetaGraph, NodeKind};
pub use plan::{Outputs, Plan, TreeInput};
pub use rlgraph_profiler as profiler;
pub use rlgraph_spaces as spaces;
pub use rng_state::{rng_from_json, rng_to_json};
pub use runtime_kernels::{KernelArg, RuntimeKernels};
pub use spec_only::SpecOnly;
pub use tree::Tree;
pub use variables::{
    FanMode, Initializer, ScalingDistribution, VarDecl, VarInfo, VariableStore, MAX_VARIABLE_ELEMENTS,
};
