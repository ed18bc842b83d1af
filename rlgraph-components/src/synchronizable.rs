//! Synchronizing one set of variables from another: hard copies for DQN target networks and
//! soft (Polyak) updates `target = tau * source + (1 - tau) * target` for SAC.

use rlgraph_core::spaces::Space;
use rlgraph_core::{Backend, Component, CoreError, GraphFn, KernelCtx, Param, Result, Tree};

/// The variable handles behind a `variables()` Dict (keys are scope paths with `.` for `/`).
pub(crate) fn handles<'a, B: Backend>(
    ctx: &KernelCtx<'a, B>,
    vars: &Tree<B::Tensor>,
) -> Result<Vec<(String, &'a B::Var)>> {
    let store = ctx.store();
    vars.flatten()
        .into_iter()
        .map(|(key, _)| {
            let name = key.trim_start_matches('/').to_string();
            let i = store.index(&name.replace('.', "/"))?;
            Ok((name, store.var(i)))
        })
        .collect()
}

fn leaf_shapes(space: &Space) -> Vec<Vec<usize>> {
    space
        .flatten()
        .into_iter()
        .map(|(_, s)| s.shape().unwrap_or(&[]).to_vec())
        .collect()
}

/// A component `name` with `sync(source, target)`: both are `variables()` Dicts of components
/// with the same structure; entries are matched in key order and must have equal shapes.
/// `tau` 1.0 is a hard copy.
pub fn synchronizable<B: Backend>(name: &str, tau: f64) -> Component<B> {
    Component::new(name)
        .with_kind("synchronizable")
        .api("sync", vec![Param::new("source"), Param::new("target")], |ctx, args| {
            ctx.graph_fn("sync", &[args.get(0)?, args.get(1)?])
        })
        .check_inputs(|s| {
            let (src, dst) = (s.get("source")?, s.get("target")?);
            if leaf_shapes(src) != leaf_shapes(dst) {
                return Err(s.mismatch("target", format!("variables shaped like the source's: {src}")));
            }
            Ok(())
        })
        .graph_fn(
            GraphFn::new("sync", move |ctx, xs| {
                let src = handles(ctx, &xs[0])?;
                let dst = handles(ctx, &xs[1])?;
                if src.len() != dst.len() {
                    return Err(CoreError::Component {
                        component: ctx.component().into(),
                        method: Some("sync".into()),
                        reason: format!("{} source variables for {} targets", src.len(), dst.len()),
                    });
                }
                for ((_, s), (_, d)) in src.iter().zip(&dst) {
                    let s = B::detach(B::var_tensor(s));
                    let new = if tau >= 1.0 {
                        s
                    } else {
                        B::add(
                            &B::affine(&s, tau, 0.0)?,
                            &B::affine(&B::detach(B::var_tensor(d)), 1.0 - tau, 0.0)?,
                        )?
                    };
                    B::var_set(d, &new)?;
                }
                Ok(vec![])
            })
            .outputs(0)
            .infer(|_, _| Ok(vec![])),
        )
}
