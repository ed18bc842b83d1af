//! Element types of primitive spaces and values.

use std::fmt;

/// The element type of a primitive space or a value leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `bool`.
    Bool,
    /// `i32`, the default integer type.
    Int32,
    /// `i64`.
    Int64,
    /// `u8`, as image frames come.
    Uint8,
    /// `f32`, the default float type.
    Float32,
    /// `f64`.
    Float64,
    /// UTF-8 strings.
    Text,
}

impl Dtype {
    /// The canonical spelling used in JSON specs and messages (numpy's names).
    pub fn name(&self) -> &'static str {
        match self {
            Dtype::Bool => "bool",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Uint8 => "uint8",
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Text => "str",
        }
    }

    /// Parses the spellings RLgraph configs use (`"float"`, `"float32"`, `"np.float32"`, `"int"`, ...).
    pub fn parse(name: &str) -> Option<Dtype> {
        let n = name.trim().to_ascii_lowercase();
        let n = n.strip_prefix("np.").or_else(|| n.strip_prefix("tf.")).unwrap_or(&n);
        Some(match n {
            "bool" | "boolean" => Dtype::Bool,
            "int" | "int32" | "i32" => Dtype::Int32,
            "int64" | "i64" | "long" => Dtype::Int64,
            "uint8" | "u8" => Dtype::Uint8,
            "float" | "float32" | "f32" => Dtype::Float32,
            "float64" | "f64" | "double" => Dtype::Float64,
            "str" | "string" | "text" => Dtype::Text,
            _ => return None,
        })
    }

    /// Whether this is one of the integer types.
    pub fn is_int(&self) -> bool {
        matches!(self, Dtype::Int32 | Dtype::Int64 | Dtype::Uint8)
    }

    /// Whether this is one of the float types.
    pub fn is_float(&self) -> bool {
        matches!(self, Dtype::Float32 | Dtype::Float64)
    }

    /// The smallest and largest value of an integer type (inclusive).
    pub(crate) fn int_limits(&self) -> Option<(i64, i64)> {
        match self {
            Dtype::Int32 => Some((i32::MIN as i64, i32::MAX as i64)),
            Dtype::Int64 => Some((i64::MIN, i64::MAX)),
            Dtype::Uint8 => Some((0, 255)),
            _ => None,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
