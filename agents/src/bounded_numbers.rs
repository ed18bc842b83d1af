//! Numbers a config must keep within bounds, refused by serde with the bound named when they
//! do not: shared by the agent spec and the update spec.

use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer};

/// A finite number above 0: a temperature or a scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PositiveReal(pub f64);

impl<'de> Deserialize<'de> for PositiveReal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match f64::deserialize(d)? {
            x if x > 0.0 && x.is_finite() => Ok(PositiveReal(x)),
            x => Err(D::Error::invalid_value(
                Unexpected::Float(x),
                &"a finite number above 0",
            )),
        }
    }
}

/// A finite number of at least 0: a noise scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NonNegativeReal(pub f64);

impl<'de> Deserialize<'de> for NonNegativeReal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match f64::deserialize(d)? {
            x if x >= 0.0 && x.is_finite() => Ok(NonNegativeReal(x)),
            x => Err(D::Error::invalid_value(
                Unexpected::Float(x),
                &"a finite number of at least 0",
            )),
        }
    }
}

/// An integer of at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Positive(pub usize);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let n = u64::deserialize(d)?;
        if n == 0 {
            return Err(D::Error::invalid_value(Unexpected::Unsigned(0), &"a positive integer"));
        }
        usize::try_from(n)
            .map(Positive)
            .map_err(|_| D::Error::invalid_value(Unexpected::Unsigned(n), &"an integer that fits this machine"))
    }
}

/// A schema that is `schema` inlined wherever the type is used (a bound, not a definition of
/// its own).
macro_rules! inline_schema {
    ($ty:ty, $name:literal, $schema:tt) => {
        impl schemars::JsonSchema for $ty {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!($schema)
            }
        }
    };
}
pub(crate) use inline_schema;

inline_schema!(PositiveReal, "PositiveReal", {"type": "number", "exclusiveMinimum": 0});
inline_schema!(NonNegativeReal, "NonNegativeReal", {"type": "number", "minimum": 0});
inline_schema!(Positive, "Positive", {"type": "integer", "minimum": 1});
