//! `Component`: a named node of the agent tree, declaring API methods, graph functions,
//! variables and an input-space check, as plain data and closures.

use std::collections::BTreeMap;
use std::sync::Arc;

use rlgraph_spaces::{Space, Value};

use crate::backend::{Backend, Device};
use crate::error::{CoreError, Result};
use crate::graph_fn::GraphFn;
use crate::meta_graph::{MetaGraph, Op};
use crate::variables::VarDecl;

/// The arguments an API-method body receives, one per parameter (`None` for a left-out
/// optional parameter).
#[derive(Clone, Debug)]
pub struct Args {
    pub(crate) ops: Vec<Option<Op>>,
    pub(crate) names: Vec<String>,
    pub(crate) component: String,
    pub(crate) method: String,
}

/// What an API-method body can do: call sub-components' (or its own) API methods, call its
/// own graph functions, and make constants.
pub struct ApiCtx<'a, B: Backend> {
    pub(crate) graph: &'a mut MetaGraph,
    pub(crate) component: &'a Component<B>,
    pub(crate) path: &'a str,
    pub(crate) root_method: &'a str,
    pub(crate) stack: &'a mut Vec<String>,
}

/// The body of an API method: wires sub-component API calls and own graph functions on
/// symbolic operands. It runs once, at assembly, so it holds no data-dependent control flow.
pub type ApiBody<B> = Arc<dyn Fn(&mut ApiCtx<'_, B>, &Args) -> Result<Vec<Op>> + Send + Sync>;

/// Declares variables once the component's input spaces are known.
pub type VariablesFn = Arc<dyn Fn(&InputSpaces) -> Result<Vec<VarDecl>> + Send + Sync>;

/// Checks the component's input spaces; where it rejects one, it says which and why.
pub type CheckFn = Arc<dyn Fn(&InputSpaces) -> Result<()> + Send + Sync>;

/// One parameter of an API method.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The parameter's name; input spaces are keyed by it across the component's API methods.
    pub name: String,
    /// The value used when a caller leaves the parameter out.
    pub default: Option<Value>,
    /// Whether a caller may leave it out with no default (the body then sees `None`).
    pub optional: bool,
}

impl Param {
    /// A required parameter.
    pub fn new(name: impl Into<String>) -> Self {
        Param {
            name: name.into(),
            default: None,
            optional: false,
        }
    }

    /// A parameter with a default value.
    pub fn with_default(name: impl Into<String>, default: Value) -> Self {
        Param {
            name: name.into(),
            default: Some(default),
            optional: false,
        }
    }

    /// A parameter that may be left out.
    pub fn optional(name: impl Into<String>) -> Self {
        Param {
            name: name.into(),
            default: None,
            optional: true,
        }
    }
}

/// An API method: a name, parameters and a body.
#[derive(Clone)]
pub struct ApiMethod<B: Backend> {
    /// The method's name.
    pub name: String,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// Whether the component may be input-complete without this method's inputs.
    pub incomplete_ok: bool,
    /// What the method does.
    pub body: ApiBody<B>,
}

/// A component: configuration as plain data plus the closures that wire and compute.
///
/// Components nest: each owns its sub-components, whose names are unique among siblings and
/// form scope paths such as `policy/network/dense`. Graph functions are generic over the
/// backend, so one component source runs on every backend.
#[derive(Clone)]
pub struct Component<B: Backend> {
    pub(crate) name: String,
    pub(crate) subs: Vec<Component<B>>,
    pub(crate) api: Vec<ApiMethod<B>>,
    pub(crate) graph_fns: Vec<GraphFn<B>>,
    pub(crate) variables: Option<VariablesFn>,
    pub(crate) check: Option<CheckFn>,
    pub(crate) trainable: bool,
    pub(crate) device: Option<Device>,
    pub(crate) kind: String,
}

impl<B: Backend> Component<B> {
    /// An empty component with this name (its scope segment).
    pub fn new(name: impl Into<String>) -> Self {
        Component {
            name: name.into(),
            subs: vec![],
            api: vec![],
            graph_fns: vec![],
            variables: None,
            check: None,
            trainable: true,
            device: None,
            kind: String::new(),
        }
    }

    /// Names what kind of component this is (`dense`, `dueling-policy`, ...), as pictures of
    /// the graph show it; RLgraph specs set it from their `type`.
    pub fn with_kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = kind.into();
        self
    }

    /// What kind of component this is (empty when nobody said).
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The name, which is this component's segment of scope paths.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Adds a sub-component.
    pub fn with_sub(mut self, sub: Component<B>) -> Self {
        self.subs.push(sub);
        self
    }

    /// Adds an API method with the given parameters and body.
    pub fn api(
        mut self,
        name: impl Into<String>,
        params: Vec<Param>,
        body: impl Fn(&mut ApiCtx<'_, B>, &Args) -> Result<Vec<Op>> + Send + Sync + 'static,
    ) -> Self {
        self.api.push(ApiMethod {
            name: name.into(),
            params,
            incomplete_ok: false,
            body: Arc::new(body),
        });
        self
    }

    /// The same component without its API method `name` (to derive variants of a component).
    pub fn without_api(mut self, name: &str) -> Self {
        self.api.retain(|m| m.name != name);
        self
    }

    /// Marks the API method added last as not needed for input-completeness.
    pub fn incomplete_ok(mut self) -> Self {
        if let Some(m) = self.api.last_mut() {
            m.incomplete_ok = true;
        }
        self
    }

    /// Adds a graph function.
    pub fn graph_fn(mut self, f: GraphFn<B>) -> Self {
        self.graph_fns.push(f);
        self
    }

    /// Sets how the component declares its variables from its input spaces.
    pub fn variables(mut self, f: impl Fn(&InputSpaces) -> Result<Vec<VarDecl>> + Send + Sync + 'static) -> Self {
        self.variables = Some(Arc::new(f));
        self
    }

    /// Sets the component's input-space check.
    pub fn check_inputs(mut self, f: impl Fn(&InputSpaces) -> Result<()> + Send + Sync + 'static) -> Self {
        self.check = Some(Arc::new(f));
        self
    }

    /// Pins the component (and, unless they say otherwise, its sub-components) to a device.
    pub fn on_device(mut self, device: Device) -> Self {
        self.device = Some(device);
        self
    }

    /// A deep copy under a new name, optionally with all its variables not trainable
    /// (for target networks).
    pub fn copy_as(&self, name: impl Into<String>, trainable: bool) -> Self {
        let mut copy = self.clone();
        copy.name = name.into();
        copy.set_trainable(trainable && self.trainable);
        copy
    }

    fn set_trainable(&mut self, trainable: bool) {
        self.trainable = trainable;
        self.subs.iter_mut().for_each(|s| s.set_trainable(trainable));
    }

    /// The sub-components.
    pub fn subs(&self) -> &[Component<B>] {
        &self.subs
    }

    /// The API methods.
    pub fn api_methods(&self) -> &[ApiMethod<B>] {
        &self.api
    }

    pub(crate) fn sub(&self, name: &str, path: &str) -> Result<&Component<B>> {
        self.subs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| CoreError::UnknownComponent {
                component: path.into(),
                name: name.into(),
                known: self.subs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", "),
            })
    }

    /// The API method `name`; an error naming the component (at `path`) and its known
    /// methods when it has none.
    pub fn method(&self, name: &str, path: &str) -> Result<&ApiMethod<B>> {
        self.api
            .iter()
            .find(|m| m.name == name)
            .ok_or_else(|| CoreError::UnknownApiMethod {
                component: path.into(),
                method: name.into(),
                known: self
                    .api
                    .iter()
                    .map(|m| m.name.as_str())
                    .chain(["variables"])
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub(crate) fn find_graph_fn(&self, name: &str, path: &str) -> Result<&GraphFn<B>> {
        self.graph_fns
            .iter()
            .find(|g| g.name == name)
            .ok_or_else(|| CoreError::UnknownGraphFn {
                component: path.into(),
                name: name.into(),
            })
    }

    /// Every component of the tree with its scope path, parents first.
    pub fn walk(&self) -> Vec<(String, &Component<B>)> {
        let mut out = vec![];
        self.walk_into(self.name.clone(), &mut out);
        out
    }

    fn walk_into<'a>(&'a self, path: String, out: &mut Vec<(String, &'a Component<B>)>) {
        out.push((path.clone(), self));
        for s in &self.subs {
            s.walk_into(format!("{path}/{}", s.name), out);
        }
    }

    /// Checks the names that must be unique: sub-components, API methods, graph functions, parameters.
    pub(crate) fn check_names(&self, path: &str) -> Result<()> {
        let dup = |what: &'static str, name: &str| CoreError::Duplicate {
            component: path.into(),
            what,
            name: name.into(),
        };
        let mut seen = std::collections::BTreeSet::new();
        for s in &self.subs {
            if s.name.is_empty() || s.name.contains('/') {
                return Err(CoreError::Component {
                    component: path.into(),
                    method: None,
                    reason: format!("sub-component name {:?} must be non-empty and contain no '/'", s.name),
                });
            }
            if !seen.insert(s.name.as_str()) {
                return Err(dup("sub-component", &s.name));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for m in &self.api {
            if !seen.insert(m.name.as_str()) || m.name == "variables" {
                return Err(dup("API method", &m.name));
            }
            let mut params = std::collections::BTreeSet::new();
            for p in &m.params {
                if !params.insert(p.name.as_str()) {
                    return Err(dup("parameter", &format!("{}({})", m.name, p.name)));
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for g in &self.graph_fns {
            if !seen.insert(g.name.as_str()) {
                return Err(dup("graph function", &g.name));
            }
        }
        Ok(())
    }
}

/// The input spaces of one component, keyed by parameter name, as the build learns them.
#[derive(Clone, Debug, Default)]
pub struct InputSpaces {
    pub(crate) component: String,
    pub(crate) spaces: BTreeMap<String, (Space, String)>,
}

impl InputSpaces {
    /// Input spaces for a component at `path` (as `ComponentTest` and tests build them).
    pub fn new(component: impl Into<String>) -> Self {
        InputSpaces {
            component: component.into(),
            spaces: BTreeMap::new(),
        }
    }

    /// The component's scope path.
    pub fn component(&self) -> &str {
        &self.component
    }

    /// The space of parameter `param`; an error naming the component if it is not known.
    pub fn get(&self, param: &str) -> Result<&Space> {
        self.spaces
            .get(param)
            .map(|(s, _)| s)
            .ok_or_else(|| CoreError::Component {
                component: self.component.clone(),
                method: None,
                reason: format!(
                    "needs the space of parameter '{param}', which no API call provides (known: {})",
                    self.spaces.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            })
    }

    /// The space of `param`, if known.
    pub fn try_get(&self, param: &str) -> Option<&Space> {
        self.spaces.get(param).map(|(s, _)| s)
    }

    /// A space-mismatch error for `param`, naming the API method that supplied it.
    pub fn mismatch(&self, param: &str, expected: impl Into<String>) -> CoreError {
        let (actual, method) = self
            .spaces
            .get(param)
            .map(|(s, m)| (s.describe(), m.clone()))
            .unwrap_or_default();
        CoreError::SpaceMismatch {
            component: self.component.clone(),
            method,
            param: param.into(),
            expected: expected.into(),
            actual,
        }
    }

    /// Fails with a space mismatch unless `param`'s space satisfies `ok`.
    pub fn expect(&self, param: &str, expected: &str, ok: impl Fn(&Space) -> bool) -> Result<()> {
        match self.try_get(param) {
            Some(s) if ok(s) => Ok(()),
            Some(_) => Err(self.mismatch(param, expected)),
            None => self.get(param).map(|_| ()),
        }
    }

    /// Records the space of `param`, supplied through API method `method`.
    pub fn insert(&mut self, param: &str, space: Space, method: &str) {
        self.spaces.insert(param.into(), (space, method.into()));
    }
}
