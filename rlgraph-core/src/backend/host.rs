//! The plain data a backend trades in: element types, devices and host tensors.

use crate::error::Result;

/// Element types a backend tensor can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// 64-bit signed integer (all integer data and indices).
    I64,
    /// Unsigned byte (images, and 0/1 boolean masks).
    U8,
}

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Device {
    /// The host CPU.
    #[default]
    Cpu,
    /// The CUDA GPU with this ordinal.
    Cuda(usize),
}

impl Device {
    /// Parses `cpu`, `cuda`, `cuda:N`, `gpu:N` (also RLgraph's `/device:GPU:N` and `/cpu`).
    pub fn parse(text: &str) -> Option<Device> {
        let t = text.trim().to_ascii_lowercase();
        let t = t.trim_start_matches('/').trim_start_matches("device:").to_string();
        if t == "cpu" || t.starts_with("cpu:") {
            return Some(Device::Cpu);
        }
        for prefix in ["cuda", "gpu"] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let rest = rest.trim_start_matches(':');
                return if rest.is_empty() {
                    Some(Device::Cuda(0))
                } else {
                    rest.parse().ok().map(Device::Cuda)
                };
            }
        }
        None
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

/// The elements of a host tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum HostData {
    /// 32-bit floats.
    F32(Vec<f32>),
    /// 64-bit floats.
    F64(Vec<f64>),
    /// 64-bit integers.
    I64(Vec<i64>),
    /// Bytes.
    U8(Vec<u8>),
}

/// A dense row-major tensor in host memory: how data enters and leaves a backend.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// The dimensions.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub data: HostData,
}

impl HostData {
    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            HostData::F32(_) => DType::F32,
            HostData::F64(_) => DType::F64,
            HostData::I64(_) => DType::I64,
            HostData::U8(_) => DType::U8,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            HostData::F32(v) => v.len(),
            HostData::F64(v) => v.len(),
            HostData::I64(v) => v.len(),
            HostData::U8(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements' little-endian bytes, as checkpoints, the wire and checksums hold them.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            HostData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostData::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostData::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            HostData::U8(v) => v.clone(),
        }
    }

    /// The elements as f64 (exact for f32, u8 and integers below 2^53).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            HostData::F32(v) => v.iter().map(|&x| x as f64).collect(),
            HostData::F64(v) => v.clone(),
            HostData::I64(v) => v.iter().map(|&x| x as f64).collect(),
            HostData::U8(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// `values` converted to `dtype` (floats truncate toward zero for integer types).
    pub fn from_f64(values: &[f64], dtype: DType) -> HostData {
        HostData::collect_f64(values.iter().copied(), dtype)
    }

    /// `values` stored as `dtype`, converted one at a time: no float64 copy of the whole
    /// (which would double the peak memory of a large variable's initial values).
    pub fn collect_f64(values: impl Iterator<Item = f64>, dtype: DType) -> HostData {
        match dtype {
            DType::F32 => HostData::F32(values.map(|x| x as f32).collect()),
            DType::F64 => HostData::F64(values.collect()),
            DType::I64 => HostData::I64(values.map(|x| x as i64).collect()),
            DType::U8 => HostData::U8(values.map(|x| x as u8).collect()),
        }
    }
}

impl HostTensor {
    /// A host tensor; fails unless the data fills the shape exactly.
    pub fn new(shape: impl Into<Vec<usize>>, data: HostData) -> Result<Self> {
        let shape = shape.into();
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(crate::error::CoreError::Backend {
                backend: "host",
                op: "HostTensor::new",
                message: format!("shape {shape:?} needs {n} elements, got {}", data.len()),
            });
        }
        Ok(HostTensor { shape, data })
    }

    /// An f32 host tensor.
    pub fn f32(shape: impl Into<Vec<usize>>, data: Vec<f32>) -> Result<Self> {
        Self::new(shape, HostData::F32(data))
    }

    /// An f64 host tensor.
    pub fn f64(shape: impl Into<Vec<usize>>, data: Vec<f64>) -> Result<Self> {
        Self::new(shape, HostData::F64(data))
    }

    /// An i64 host tensor.
    pub fn i64(shape: impl Into<Vec<usize>>, data: Vec<i64>) -> Result<Self> {
        Self::new(shape, HostData::I64(data))
    }

    /// A u8 host tensor.
    pub fn u8(shape: impl Into<Vec<usize>>, data: Vec<u8>) -> Result<Self> {
        Self::new(shape, HostData::U8(data))
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }
}
