//! The one error type of this crate.

use thiserror::Error;

/// Everything that can be wrong with a space, a space spec or a value checked against a space.
///
/// `at` is always a flat key in RLgraph's spelling (`/a/_T0_`, or `(root)` for the top), so that
/// a message points at the exact place in a nested space.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SpaceError {
    /// The spec text is not JSON at all.
    #[error("malformed JSON space spec at line {line}, column {column}: {message}; fix the JSON syntax")]
    MalformedJson {
        /// 1-based line of the syntax error.
        line: usize,
        /// 1-based column of the syntax error.
        column: usize,
        /// serde_json's description of the problem.
        message: String,
    },
    /// A JSON object key that is not a string (for example `{1: "float"}`).
    #[error("Dict keys must be strings (line {line}, column {column}); quote the key")]
    NonStringKey {
        /// 1-based line of the key.
        line: usize,
        /// 1-based column of the key.
        column: usize,
    },
    /// A Dict key that would break flat keys.
    #[error("invalid Dict key {key:?} at {at}: {reason}")]
    InvalidKey {
        /// Where the Dict is.
        at: String,
        /// The offending key.
        key: String,
        /// Why it is not allowed.
        reason: String,
    },
    /// A `type` the parser does not know.
    #[error("unknown space type {type_name:?} at {at}; known types: float-box, int-box, bool-box, text-box, dict, tuple (or float, int, bool, text)")]
    UnknownType {
        /// Where the spec is.
        at: String,
        /// The type name as written.
        type_name: String,
    },
    /// A key in a typed spec that the type does not take.
    #[error("unknown key {key:?} in the {type_name} spec at {at}; allowed keys: {allowed}")]
    UnknownKey {
        /// Where the spec is.
        at: String,
        /// The space type the spec is for.
        type_name: String,
        /// The unknown key.
        key: String,
        /// The keys that type accepts.
        allowed: String,
    },
    /// A JSON value of the wrong kind, for example a string where a number belongs.
    #[error("wrong JSON at {at} ({field}): expected {expected}, got {actual}")]
    WrongJson {
        /// Where the spec or value is.
        at: String,
        /// Which field of it.
        field: String,
        /// What was expected there.
        expected: String,
        /// What was found.
        actual: String,
    },
    /// A shape that is not a list of non-negative integers, or does not fit the bounds.
    #[error("invalid shape at {at}: {reason}")]
    InvalidShape {
        /// Where the space is.
        at: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Bounds that do not describe a non-empty range.
    #[error("invalid bounds at {at}: {reason}")]
    InvalidBounds {
        /// Where the space is.
        at: String,
        /// What is wrong with them.
        reason: String,
    },
    /// A value that is not in its space: wrong structure, dtype, shape, or an element out of bounds.
    #[error("value not in space at {at}: {reason}")]
    NotContained {
        /// The flat key of the leaf (or container) that does not fit.
        at: String,
        /// Which element or which property does not fit, and why.
        reason: String,
    },
    /// A list of flat keys that does not describe one nested structure.
    #[error("cannot unflatten at {at}: {reason}")]
    Unflatten {
        /// The flat key where the keys disagree.
        at: String,
        /// What disagrees.
        reason: String,
    },
    /// An operation that only a certain kind of space supports.
    #[error("{operation} is not defined for {space} at {at}")]
    Unsupported {
        /// Where the space is.
        at: String,
        /// What was asked for.
        operation: String,
        /// The space it was asked of.
        space: String,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = SpaceError> = std::result::Result<T, E>;

/// How a flat key is shown in messages: the root has the empty key, shown as `(root)`.
pub(crate) fn display_key(key: &str) -> String {
    if key.is_empty() {
        "(root)".to_string()
    } else {
        key.to_string()
    }
}
