//! RMSProp on libtorch in place: the arithmetic of `rlgraph_core::backend::rmsprop_step_ops`
//! in the same order, written into the variable and its running averages instead of through
//! a dozen new tensors (why: as `inplace_adam.rs` says for Adam, each new tensor the size of
//! a variable costs page faults on the CPU and a launch on a GPU).

use rlgraph_core::backend::{RmsPropSlots, RmsPropStep};
use tch::Tensor;

use crate::TchTensor;

/// One RMSProp step in place (outside the gradient tape). Each product and sum is rounded as
/// the separate ops round it; only the sign of a zero may differ (they add `0.0` after every
/// scaling).
pub(crate) fn step(
    var: &Tensor,
    slots: RmsPropSlots<'_, TchTensor>,
    g: &Tensor,
    h: &RmsPropStep,
) -> Result<(), tch::TchError> {
    tch::no_grad(|| {
        let (mut var, mut v) = (var.shallow_clone(), slots.v.0.shallow_clone());
        // v = ρ v + (1 - ρ) g²
        let _ = v.f_mul_scalar_(h.decay)?;
        let mut g2 = g.f_square()?;
        let _ = g2.f_mul_scalar_(1.0 - h.decay)?;
        let _ = v.f_add_(&g2)?;
        // Centred: mg = ρ mg + (1 - ρ) g, and the root of v - mg².
        let mut denom = match slots.mg {
            Some(mg) => {
                let mut mg = mg.0.shallow_clone();
                let _ = mg.f_mul_scalar_(h.decay)?;
                let _ = mg.f_add_(&g.f_mul_scalar(1.0 - h.decay)?)?;
                v.f_sub(&mg.f_square()?)?
            }
            None => v.copy(),
        };
        let _ = denom.f_sqrt_()?;
        let _ = denom.f_add_scalar_(h.epsilon)?;
        let mut scaled = g.f_div(&denom)?;
        let step = match slots.mom {
            Some(mom) => {
                let mut mom = mom.0.shallow_clone();
                let _ = mom.f_mul_scalar_(h.momentum)?;
                let _ = mom.f_add_(&scaled)?;
                mom.f_mul_scalar(h.lr)?
            }
            None => {
                let _ = scaled.f_mul_scalar_(h.lr)?;
                scaled
            }
        };
        let _ = var.f_sub_(&step)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use rlgraph_core::backend::{RmsPropSlots, RmsPropStep};
    use tch::{Device, Kind, Tensor};

    use crate::{Tch, TchTensor};

    fn slots(s: &[TchTensor; 4], centred: bool, momentum: bool) -> RmsPropSlots<'_, TchTensor> {
        RmsPropSlots {
            v: &s[1],
            mg: centred.then_some(&s[2]),
            mom: momentum.then_some(&s[3]),
        }
    }

    /// Every combination of centring and momentum, in place against the separate ops, over
    /// three steps: the same numbers to the bit (no value here is a zero, whose sign alone
    /// may differ).
    #[test]
    fn the_in_place_step_equals_the_separate_ops() {
        tch::manual_seed(5);
        let shape = [257i64];
        let randn = || Tensor::randn(shape, (Kind::Float, Device::Cpu));
        let start = [randn(), randn().abs() + 1.0, randn() * 0.1, randn()];
        let h = RmsPropStep {
            lr: 2.5e-4,
            decay: 0.95,
            epsilon: 0.01,
            momentum: 0.9,
        };
        for (centred, momentum) in [(false, false), (true, false), (false, true), (true, true)] {
            let state = || start.each_ref().map(|t| TchTensor(t.copy()));
            let (in_place, ops) = (state(), state());
            for _ in 0..3 {
                let g = randn();
                super::step(&in_place[0].0, slots(&in_place, centred, momentum), &g, &h).unwrap();
                rlgraph_core::backend::rmsprop_step_ops::<Tch>(
                    &ops[0],
                    slots(&ops, centred, momentum),
                    &TchTensor(g),
                    &h,
                )
                .unwrap();
            }
            for (i, (a, b)) in in_place.iter().zip(&ops).enumerate() {
                assert!(a.0.equal(&b.0), "state {i}, centred {centred}, momentum {momentum}");
            }
            assert!(!in_place[0].0.equal(&start[0]), "the steps moved the variable");
        }
    }
}
