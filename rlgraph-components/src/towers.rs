//! The `multi_gpu_sync` device strategy: the learner's loss computed by N towers (copies of
//! the learner, each on its own GPU, or all on the CPU when there are fewer GPUs than
//! towers), each on its share of the batch; their gradients averaged, weighted by shard size,
//! so that uneven splits give the same update as one tower; one step of the configured
//! optimizer on tower 0's variables; and the other towers copied from tower 0 before each
//! update, so they always compute on equal weights.
//!
//! [`MultiGpuSync::apply`] wraps any learner component whose loss is one API method.
//! Learners whose loss spans several components (DQN's policy, target and loss) build the
//! same thing from [`split_batch`], [`average_gradients`] and [`concat_batch`].

use rlgraph_core::spaces::{FloatBox, Space};
use rlgraph_core::{ApiCtx, Backend, Component, CoreError, Device, GraphFn, Op, Param, Result, Tree};

use crate::optimizer::{optimizer, OptimizerSpec};
use crate::synchronizable::{handles, synchronizable};

/// Settings of the `multi_gpu_sync` strategy.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiGpuSync {
    /// How many towers compute the loss.
    pub towers: usize,
    /// With fewer GPUs than towers, put every tower on the CPU (RLgraph's
    /// `fake_gpus_if_necessary`) rather than refuse.
    pub fake_gpus: bool,
}

impl MultiGpuSync {
    /// The devices the towers go on: one GPU each where the backend has enough, else (with
    /// `fake_gpus`) all on the CPU.
    pub fn devices<B: Backend>(&self) -> Result<Vec<Device>> {
        // CUDA numbers its devices from 0 without gaps, so the first missing one ends the
        // search (a huge tower count does not probe that many devices).
        let gpus: Vec<Device> = (0..self.towers)
            .map(Device::Cuda)
            .take_while(|d| B::device_available(*d))
            .collect();
        if gpus.len() == self.towers {
            Ok(gpus)
        } else if self.fake_gpus {
            Ok(vec![Device::Cpu; self.towers])
        } else {
            Err(CoreError::Device(format!(
                "{} towers need {} GPUs, this backend sees {}; use fewer towers or fake_gpus_if_necessary",
                self.towers,
                self.towers,
                gpus.len()
            )))
        }
    }

    /// Wraps `learner`, whose API method `loss_method` takes batch inputs `batch_params` and
    /// returns a scalar mean loss, into a component `name` with `update(batch_params...,
    /// time_percentage)` (one step of `optimizer` on the batch; returns its mean loss) and
    /// `loss` (tower 0's loss). The towers are `tower-0` .. `tower-{N-1}`.
    pub fn apply<B: Backend>(
        &self,
        name: &str,
        learner: &Component<B>,
        loss_method: &str,
        batch_params: &[&str],
        optimizer_spec: OptimizerSpec,
    ) -> Result<Component<B>> {
        let n = self.towers;
        if n == 0 {
            return Err(CoreError::Device("multi_gpu_sync needs at least one tower".into()));
        }
        learner.method(loss_method, learner.name())?;
        let k = batch_params.len();
        let mut params: Vec<Param> = batch_params.iter().map(|p| Param::new(*p)).collect();
        let loss_params = params.clone();
        params.push(Param::with_default(
            "time_percentage",
            rlgraph_core::spaces::Value::f32(0.0),
        ));
        let mut root = Component::<B>::new(name)
            .with_kind("multi-gpu-sync")
            .with_sub(optimizer("optimizer", optimizer_spec));
        for (i, device) in self.devices::<B>()?.into_iter().enumerate() {
            root = root.with_sub(learner.copy_as(format!("tower-{i}"), true).on_device(device));
            if i > 0 {
                root = root.with_sub(synchronizable(&format!("tower-{i}-sync"), 1.0));
            }
        }
        let (lm, loss_method) = (loss_method.to_string(), loss_method.to_string());
        Ok(root
            .api("update", params, move |ctx, args| {
                let inputs = args.present();
                let vars: Vec<Op> = (0..n)
                    .map(|t| Ok(ctx.call(&format!("tower-{t}"), "variables", &[])?[0]))
                    .collect::<Result<_>>()?;
                for (t, &twin) in vars.iter().enumerate().skip(1) {
                    ctx.call(&format!("tower-{t}-sync"), "sync", &[vars[0], twin])?;
                }
                let shards = ctx.graph_fn("split", &inputs[..k])?;
                let losses: Vec<Op> = (0..n)
                    .map(|t| Ok(ctx.call(&format!("tower-{t}"), &lm, &shard_of(&shards, n, t))?[0]))
                    .collect::<Result<_>>()?;
                Ok(vec![step_on_average(ctx, &vars, &losses, &shards[..n], inputs[k])?])
            })
            .api("loss", loss_params, move |ctx, args| {
                ctx.call("tower-0", &loss_method, &args.present())
            })
            .graph_fn(split_batch(n, k))
            .graph_fn(average_gradients(n)))
    }
}

/// Tower `t`'s inputs among the outputs of [`split_batch`] over `n` towers.
pub fn shard_of(shards: &[Op], n: usize, t: usize) -> Vec<Op> {
    shards.iter().skip(t).step_by(n.max(1)).copied().collect()
}

/// Inside an `update` API method: the towers' gradients averaged ([`average_gradients`],
/// which the component must have) and one step of its `optimizer` sub-component on tower 0's
/// variables (`vars[0]`). `shards` holds one input's shards (for their sizes). Returns the
/// batch's mean loss.
pub fn step_on_average<B: Backend>(
    ctx: &mut ApiCtx<'_, B>,
    vars: &[Op],
    losses: &[Op],
    shards: &[Op],
    time: Op,
) -> Result<Op> {
    let inputs: Vec<Op> = vars.iter().chain(losses).chain(shards).copied().collect();
    let averaged = ctx.graph_fn("average_gradients", &inputs)?;
    let main = vars
        .first()
        .copied()
        .ok_or_else(|| CoreError::Device("no towers".into()))?;
    ctx.call("optimizer", "apply_gradients", &[main, averaged[0], time])?;
    Ok(averaged[1])
}

/// `split(x_1..x_k)`: each input cut along its first (batch) dimension into `n` shards as
/// equal as they can be; outputs `x_1`'s shards, then `x_2`'s, and so on (`k * n` outputs).
pub fn split_batch<B: Backend>(n: usize, k: usize) -> GraphFn<B> {
    GraphFn::tensors("split", move |_, xs| {
        let mut out = Vec::with_capacity(k * n);
        for x in xs {
            let size = B::shape(x).first().copied().unwrap_or(0);
            if size < n {
                return Err(CoreError::Device(format!(
                    "a batch of {size} cannot be split over {n} towers"
                )));
            }
            let mut start = 0;
            for t in 0..n {
                let len = size / n + usize::from(t < size % n);
                out.push(B::narrow(x, 0, start, len)?);
                start += len;
            }
        }
        Ok(out)
    })
    .outputs(k * n)
    .infer(move |_, spaces: &[Space]| Ok(spaces.iter().flat_map(|s| std::iter::repeat_n(s.clone(), n)).collect()))
}

/// `concat(x_1..x_n)`: the shards of one batch joined again along the first dimension.
pub fn concat_batch<B: Backend>(name: &str) -> GraphFn<B> {
    GraphFn::tensors(name, |_, xs: &[&B::Tensor]| {
        let owned: Vec<B::Tensor> = xs.iter().map(|&x| x.clone()).collect();
        Ok([B::concat(&owned, 0)?])
    })
    .infer(|_, spaces| Ok(vec![spaces.first().cloned().unwrap_or_else(|| Space::tuple(vec![]))]))
}

/// `average_gradients(vars_1..vars_n, loss_1..loss_n, shard_1..shard_n)`: each tower's
/// gradients of its loss with respect to its own `variables()` Dict, weighted by its shard's
/// share of the batch and summed on tower 1's device; outputs those gradients (a Dict keyed
/// like `vars_1`, ready for an optimizer's `apply_gradients`) and the batch's mean loss.
pub fn average_gradients<B: Backend>(n: usize) -> GraphFn<B> {
    GraphFn::new("average_gradients", move |ctx, xs| {
        let bad = |reason: String| CoreError::Component {
            component: ctx.component().into(),
            method: Some("average_gradients".into()),
            reason,
        };
        if xs.len() != 3 * n {
            return Err(bad(format!("{} inputs for {n} towers (want 3 per tower)", xs.len())));
        }
        let (vars, rest) = xs.split_at(n);
        let (losses, shards) = rest.split_at(n);
        let sizes: Vec<f64> = shards
            .iter()
            .map(|s| s.as_leaf().and_then(|s| B::shape(s).first().copied()).unwrap_or(0) as f64)
            .collect();
        let total: f64 = sizes.iter().sum();
        if total == 0.0 {
            return Err(bad("an empty batch has no gradients".into()));
        }
        let main = handles(ctx, &vars[0])?;
        let home = main
            .first()
            .map(|(_, v)| B::device(B::var_tensor(v)))
            .unwrap_or(Device::Cpu);
        let mut sum: Vec<Option<B::Tensor>> = vec![None; main.len()];
        let mut mean_loss: Option<B::Tensor> = None;
        for t in 0..n {
            let tower = handles(ctx, &vars[t])?;
            if tower.len() != main.len() {
                return Err(bad(format!(
                    "tower {t} has {} variables, tower 0 {}",
                    tower.len(),
                    main.len()
                )));
            }
            let loss = losses[t]
                .as_leaf()
                .ok_or_else(|| bad(format!("tower {t}'s loss is not a single tensor")))?;
            let refs: Vec<&B::Var> = tower.iter().map(|(_, v)| *v).collect();
            let w = sizes[t] / total;
            for (slot, g) in sum.iter_mut().zip(B::grads(loss, &refs)?) {
                let g = B::affine(&B::to_device(&g, home)?, w, 0.0)?;
                *slot = Some(match slot.take() {
                    Some(acc) => B::add(&acc, &g)?,
                    None => g,
                });
            }
            let l = B::affine(&B::to_device(&B::detach(loss), home)?, w, 0.0)?;
            mean_loss = Some(match mean_loss {
                Some(acc) => B::add(&acc, &l)?,
                None => l,
            });
        }
        let grads = main
            .iter()
            .zip(sum)
            .map(|((key, _), g)| {
                Ok((
                    key.clone(),
                    Tree::Leaf(g.ok_or_else(|| bad("a gradient is missing".into()))?),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let mean_loss = mean_loss.ok_or_else(|| bad("no towers".into()))?;
        Ok(vec![Tree::Dict(grads.into_iter().collect()), Tree::Leaf(mean_loss)])
    })
    .outputs(2)
    .infer(|_, spaces| Ok(vec![spaces[0].clone(), FloatBox::new([]).into()]))
}
