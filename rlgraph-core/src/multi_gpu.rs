//! The `multi_gpu_sync` device strategy: a rewrite of the component tree before assembly.
//!
//! The learner is deep-copied into N towers (`tower-0` .. `tower-{N-1}`), each on its own GPU,
//! or on the CPU when there are fewer GPUs than towers. The generated `update` API method splits
//! the batch along its first dimension, has each tower compute its loss on its shard, takes
//! each tower's gradients, averages them weighted by shard size (so uneven splits give the same
//! update as one tower), applies one SGD step to tower 0's variables and copies the result to
//! every other tower, which keeps tower weights equal.

use rlgraph_spaces::Space;

use crate::assembly::Op;
use crate::backend::{Backend, Device};
use crate::component::{Component, Param};
use crate::error::{CoreError, Result};
use crate::graph_fn::GraphFn;

/// Settings of the `multi_gpu_sync` strategy.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiGpuSync {
    /// How many towers to replicate the learner into.
    pub towers: usize,
    /// The SGD step size applied to the averaged gradients.
    pub learning_rate: f64,
}

impl MultiGpuSync {
    /// The devices the towers go on: GPUs where the backend has them, else the CPU.
    pub fn devices<B: Backend>(&self) -> Vec<Device> {
        let gpus: Vec<Device> = (0..self.towers)
            .map(Device::Cuda)
            .filter(|d| B::device_available(*d))
            .collect();
        if gpus.len() == self.towers {
            gpus
        } else {
            vec![Device::Cpu; self.towers]
        }
    }

    /// Wraps `learner`, whose API method `loss_method` takes batch inputs `batch_params` and
    /// returns a scalar mean loss, into a component `name` with an `update` API method
    /// (same parameters, returns the batch's mean loss) and a `loss` method (tower 0's loss).
    pub fn apply<B: Backend>(
        &self,
        name: &str,
        learner: &Component<B>,
        loss_method: &str,
        batch_params: &[&str],
    ) -> Result<Component<B>> {
        let n = self.towers;
        if n == 0 {
            return Err(CoreError::Device("multi_gpu_sync needs at least one tower".into()));
        }
        learner.method(loss_method, learner.name())?;
        let k = batch_params.len();
        let params: Vec<Param> = batch_params.iter().map(|p| Param::new(*p)).collect();
        let mut root = Component::<B>::new(name);
        for (i, device) in self.devices::<B>().into_iter().enumerate() {
            root = root.with_sub(learner.copy_as(format!("tower-{i}"), true).on_device(device));
        }
        let loss_method = loss_method.to_string();
        let lm = loss_method.clone();
        let lr = self.learning_rate;
        root = root
            .api("update", params.clone(), move |ctx, args| {
                let shards = ctx.graph_fn("split", &args.present())?;
                let mut inputs: Vec<Op> = vec![];
                for t in 0..n {
                    let tower_args: Vec<Op> = (0..k).map(|j| shards[j * n + t]).collect();
                    inputs.push(ctx.call(&format!("tower-{t}"), &lm, &tower_args)?[0]);
                }
                inputs.extend((0..n).map(|t| shards[t]));
                ctx.graph_fn("sync_update", &inputs)
            })
            .api("loss", params, move |ctx, args| {
                ctx.call("tower-0", &loss_method, &args.present())
            })
            .graph_fn(
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
                .infer(move |_, spaces: &[Space]| {
                    Ok(spaces.iter().flat_map(|s| std::iter::repeat_n(s.clone(), n)).collect())
                }),
            )
            .graph_fn(
                GraphFn::tensors("sync_update", move |ctx, xs| {
                    let (losses, shards) = xs.split_at(n);
                    let store = ctx.store();
                    let tower_vars = |t: usize| -> Vec<usize> {
                        let prefix = format!("{}/tower-{t}/", ctx.component());
                        (0..store.len())
                            .filter(|&i| store.info(i).decl.trainable && store.info(i).path.starts_with(&prefix))
                            .collect()
                    };
                    let main = tower_vars(0);
                    let sizes: Vec<f64> = shards
                        .iter()
                        .map(|s| B::shape(s).first().copied().unwrap_or(0) as f64)
                        .collect();
                    let total: f64 = sizes.iter().sum();
                    let mut avg: Vec<Option<B::Tensor>> = vec![None; main.len()];
                    let mut mean_loss: Option<B::Tensor> = None;
                    for t in 0..n {
                        let ids = tower_vars(t);
                        let handles: Vec<&B::Var> = ids.iter().map(|&i| store.var(i)).collect();
                        let grads = B::grads(losses[t], &handles)?;
                        let w = sizes[t] / total;
                        let home = store.info(main.first().copied().unwrap_or(0)).device;
                        for (slot, g) in avg.iter_mut().zip(grads) {
                            let g = B::affine(&B::to_device(&g, home)?, w, 0.0)?;
                            *slot = Some(match slot.take() {
                                Some(acc) => B::add(&acc, &g)?,
                                None => g,
                            });
                        }
                        let l = B::affine(&B::to_device(&B::detach(losses[t]), home)?, w, 0.0)?;
                        mean_loss = Some(match mean_loss {
                            Some(acc) => B::add(&acc, &l)?,
                            None => l,
                        });
                    }
                    for (j, &i) in main.iter().enumerate() {
                        let Some(g) = &avg[j] else { continue };
                        let v = B::var_tensor(store.var(i));
                        let new = B::sub(&B::detach(v), &B::affine(g, lr, 0.0)?)?;
                        B::var_set(store.var(i), &new)?;
                        for t in 1..n {
                            let twin = tower_vars(t)[j];
                            B::var_set(store.var(twin), &B::to_device(&new, store.info(twin).device)?)?;
                        }
                    }
                    mean_loss
                        .map(|l| vec![l])
                        .ok_or_else(|| CoreError::Device("no towers".into()))
                })
                .infer(|_, _| Ok(vec![rlgraph_spaces::FloatBox::new([]).into()])),
            );
        Ok(root)
    }
}
