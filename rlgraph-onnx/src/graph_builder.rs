//! A small builder of ONNX graphs: named weights and constants as initializers, one node per
//! call with a fresh output name, and the model around them.

use rlgraph_core::{CoreError, HostData, HostTensor, Result};

use crate::onnx::{
    attribute_proto, tensor_proto, tensor_shape_proto, type_proto, AttributeProto, GraphProto, ModelProto, NodeProto,
    OperatorSetIdProto, StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

/// ONNX's element types used here (`TensorProto.DataType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// float32.
    F32 = tensor_proto::DataType::Float as isize,
    /// uint8.
    U8 = tensor_proto::DataType::Uint8 as isize,
    /// int64.
    I64 = tensor_proto::DataType::Int64 as isize,
}

/// The opset the graphs are written for (ONNX 1.12 and later read it).
pub const OPSET: i64 = 17;
/// The IR version that goes with [`OPSET`].
const IR_VERSION: i64 = 8;

/// Nodes and initializers of one graph under construction.
#[derive(Default)]
pub struct GraphBuilder {
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    used: usize,
}

impl GraphBuilder {
    /// A name no other value of the graph has, readable after `hint`.
    fn fresh(&mut self, hint: &str) -> String {
        self.used += 1;
        format!("{hint}_{}", self.used)
    }

    /// A float32 initializer named `name` holding `t` (a trained variable); an error for
    /// another element type.
    pub fn weight(&mut self, name: &str, t: &HostTensor) -> Result<String> {
        let HostData::F32(data) = &t.data else {
            return Err(CoreError::Config {
                at: name.into(),
                reason: format!("expected a float32 variable, got {:?}", t.data.dtype()),
            });
        };
        Ok(self.constant(name, &t.shape, data.clone()))
    }

    /// A float32 constant of `shape` under a fresh name after `hint`.
    pub fn constant(&mut self, hint: &str, shape: &[usize], data: Vec<f32>) -> String {
        let name = self.fresh(hint);
        self.initializers.push(TensorProto {
            name: Some(name.clone()),
            dims: shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(Elem::F32 as i32),
            float_data: data,
            ..Default::default()
        });
        name
    }

    /// An int64 constant of `shape` under a fresh name after `hint` (shapes and indices).
    pub fn constant_i64(&mut self, hint: &str, data: Vec<i64>) -> String {
        let name = self.fresh(hint);
        self.initializers.push(TensorProto {
            name: Some(name.clone()),
            dims: vec![data.len() as i64],
            data_type: Some(Elem::I64 as i32),
            int64_data: data,
            ..Default::default()
        });
        name
    }

    /// A node of `op_type` on `inputs` with `attributes`; returns its one output's name.
    pub fn op(&mut self, op_type: &str, inputs: &[&str], attributes: Vec<AttributeProto>) -> String {
        let output = self.fresh(&op_type.to_ascii_lowercase());
        self.nodes.push(NodeProto {
            op_type: Some(op_type.into()),
            name: Some(output.clone()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.clone()],
            attribute: attributes,
            ..Default::default()
        });
        output
    }

    /// Renames value `from` to `to` (an Identity node), so outputs get their public names.
    pub fn rename(&mut self, from: &str, to: &str) {
        self.nodes.push(NodeProto {
            op_type: Some("Identity".into()),
            name: Some(format!("{to}_identity")),
            input: vec![from.into()],
            output: vec![to.into()],
            ..Default::default()
        });
    }

    /// The model: this graph named `name` with its `inputs` and `outputs`, and `metadata`
    /// (key, value) pairs.
    pub fn finish(
        self,
        name: &str,
        inputs: Vec<ValueInfoProto>,
        outputs: Vec<ValueInfoProto>,
        metadata: Vec<(String, String)>,
    ) -> ModelProto {
        ModelProto {
            ir_version: Some(IR_VERSION),
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(OPSET),
            }],
            producer_name: Some("rlgraph-rs".into()),
            producer_version: Some(env!("CARGO_PKG_VERSION").into()),
            graph: Some(GraphProto {
                name: Some(name.into()),
                node: self.nodes,
                initializer: self.initializers,
                input: inputs,
                output: outputs,
                ..Default::default()
            }),
            metadata_props: metadata
                .into_iter()
                .map(|(key, value)| StringStringEntryProto {
                    key: Some(key),
                    value: Some(value),
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// A graph input or output: a tensor of `elem` whose first dimension is the batch (named
/// `batch`, any size) and whose other dimensions are `item`.
pub fn batched(name: &str, elem: Elem, item: &[usize]) -> ValueInfoProto {
    let batch = tensor_shape_proto::Dimension {
        value: Some(tensor_shape_proto::dimension::Value::DimParam("batch".into())),
        ..Default::default()
    };
    let dims = std::iter::once(batch).chain(item.iter().map(|&d| tensor_shape_proto::Dimension {
        value: Some(tensor_shape_proto::dimension::Value::DimValue(d as i64)),
        ..Default::default()
    }));
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem as i32),
                shape: Some(TensorShapeProto { dim: dims.collect() }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// An integer attribute.
pub fn int_attr(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Int as i32),
        i: Some(value),
        ..Default::default()
    }
}

/// A float attribute.
pub fn float_attr(name: &str, value: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Float as i32),
        f: Some(value),
        ..Default::default()
    }
}

/// A list-of-integers attribute.
pub fn ints_attr(name: &str, values: Vec<i64>) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_proto::AttributeType::Ints as i32),
        ints: values,
        ..Default::default()
    }
}
