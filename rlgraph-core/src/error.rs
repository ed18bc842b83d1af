//! The one error type of the core crate.

use thiserror::Error;

/// What can go wrong while building or executing a component graph, or inside a backend.
///
/// Every variant that concerns a place names it: the component's scope path, the API method,
/// the parameter. The message says what to do next where there is something to do.
#[derive(Debug, Error)]
pub enum CoreError {
    /// A space or value problem reported by `rlgraph-spaces`.
    #[error(transparent)]
    Space(#[from] rlgraph_spaces::SpaceError),
    /// A backend operation failed (shape mismatch inside a kernel, unsupported dtype, ...).
    #[error("backend {backend} failed in {op}: {message}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// The operation.
        op: &'static str,
        /// The backend's own message.
        message: String,
    },
    /// A component never learns the spaces of some of its API-method parameters.
    #[error("component '{component}' is input-incomplete: no space ever reached {missing}; feed these parameters from the root's inputs, or mark the API method with `.incomplete_ok()` if it need not be complete")]
    InputIncomplete {
        /// The component's scope path.
        component: String,
        /// The missing parameters, as `method(param)`.
        missing: String,
    },
    /// A space that does not fit where it arrives.
    #[error("space mismatch at component '{component}', API method '{method}', parameter '{param}': expected {expected}, got {actual}")]
    SpaceMismatch {
        /// The component's scope path.
        component: String,
        /// The API method.
        method: String,
        /// The parameter.
        param: String,
        /// The space that was expected there.
        expected: String,
        /// The space that arrived.
        actual: String,
    },
    /// A call to an API method the component does not have.
    #[error("component '{component}' has no API method '{method}'; it has: {known}")]
    UnknownApiMethod {
        /// The component's scope path.
        component: String,
        /// The method asked for.
        method: String,
        /// The methods it does have.
        known: String,
    },
    /// A call to a sub-component that does not exist.
    #[error("component '{component}' has no sub-component '{name}'; it has: {known}")]
    UnknownComponent {
        /// The calling component's scope path.
        component: String,
        /// The name asked for.
        name: String,
        /// The sub-components it does have.
        known: String,
    },
    /// A call to a graph function the component does not have.
    #[error("component '{component}' has no graph function '{name}'")]
    UnknownGraphFn {
        /// The component's scope path.
        component: String,
        /// The graph function asked for.
        name: String,
    },
    /// Two things share a name where names must be unique.
    #[error("duplicate {what} '{name}' in component '{component}'; names must be unique")]
    Duplicate {
        /// The component's scope path.
        component: String,
        /// What kind of thing (sub-component, API method, variable, parameter).
        what: &'static str,
        /// The repeated name.
        name: String,
    },
    /// An API method that calls itself, directly or through others.
    #[error("cycle in API calls: {path}; an API method must not call itself, directly or indirectly")]
    Cycle {
        /// The calls that close the cycle, as `component.method -> ...`.
        path: String,
    },
    /// Arguments that do not match an API method's parameters.
    #[error("bad arguments to component '{component}', API method '{method}': {reason}")]
    BadArguments {
        /// The component's scope path.
        component: String,
        /// The API method.
        method: String,
        /// What is wrong.
        reason: String,
    },
    /// A component rejected its input spaces, or a graph function failed at build or run time.
    #[error("component '{component}'{}: {reason}", method.as_ref().map(|m| format!(", '{m}'")).unwrap_or_default())]
    Component {
        /// The component's scope path.
        component: String,
        /// The API method or graph function, where known.
        method: Option<String>,
        /// What went wrong.
        reason: String,
    },
    /// A variable path that does not exist, or a value that does not fit it.
    #[error("variable '{path}': {reason}")]
    Variable {
        /// The variable's scope path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing a checkpoint failed.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A build error with a DOT rendering of the meta graph around the failure.
    #[error("{error}\n(DOT of the meta graph around the failure follows)\n{dot}")]
    Diagnosed {
        /// The error.
        error: Box<CoreError>,
        /// Graphviz DOT of the neighbourhood of the first unresolved node.
        dot: String,
    },
    /// A JSON config or component spec that cannot be used as written.
    #[error("config {at}: {reason}")]
    Config {
        /// Where in the spec, as a JSON path (`network_spec[0].units`).
        at: String,
        /// What is wrong and what would be right.
        reason: String,
    },
    /// Training produced a NaN or infinite loss or weight.
    #[error("training diverged at step {step}: {what}; lower the learning rate or check the preprocessing (a division by 0?), or let training go on with --on-divergence warn")]
    Diverged {
        /// The environment step (over all copies) at which it was found.
        step: u64,
        /// What is not finite: the loss, and the first such variable by scope path.
        what: String,
    },
    /// A device that is not available, or a device strategy that cannot apply.
    #[error("device: {0}")]
    Device(String),
}

/// Shorthand for results of the core crate.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;
