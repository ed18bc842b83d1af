//! `CompareOps`: comparisons as 0/1 `U8` masks, and selection by a mask.

use super::prelude::*;

case!(comparisons_give_u8_masks, vec![
    vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0], vec![0.0, 1.0, 1.0], vec![1.0, 0.0, 0.0], vec![1.0, 1.0, 0.0]
], <B> {
    let a = f32s::<B>(&[3], &[1.0, 2.0, 3.0])?;
    let b = f32s::<B>(&[], &[2.0])?;
    let out = [B::eq(&a, &b)?, B::gt(&a, &b)?, B::ge(&a, &b)?, B::lt(&a, &b)?, B::le(&a, &b)?];
    if out.iter().any(|m| B::dtype(m) != DType::U8) { return Err(CoreError::Device("mask dtype".into())); }
    host::<B>(&out)
});

case!(where_cond_selects_and_broadcasts, vec![vec![1.0, 0.0, 3.0]], <B> {
    let mask = B::from_host(&HostTensor::u8([3], vec![1, 0, 1])?, test_device::<B>())?;
    host::<B>(&[B::where_cond(&mask, &f32s::<B>(&[3], &[1.0, 2.0, 3.0])?, &f32s::<B>(&[], &[0.0])?)?])
});

// [1, 2, 3] against 2, worked by hand.
case!(comparisons_as_parameters, vec![
    vec![0.0, 1.0, 0.0],
    vec![0.0, 0.0, 1.0],
    vec![0.0, 1.0, 1.0],
    vec![1.0, 0.0, 0.0],
    vec![1.0, 1.0, 0.0],
], <B> {
    let a = f32s::<B>(&[3], &[1.0, 2.0, 3.0])?;
    let b = f32s::<B>(&[], &[2.0])?;
    let ops = [CmpOp::Eq, CmpOp::Gt, CmpOp::Ge, CmpOp::Lt, CmpOp::Le];
    let outs = ops.iter().map(|&op| B::cmp(op, &a, &b)).collect::<Result<Vec<_>>>()?;
    for m in &outs {
        if B::dtype(m) != DType::U8 {
            return Err(CoreError::Backend { backend: B::NAME, op: "test", message: "a mask that is not U8".into() });
        }
    }
    host::<B>(&outs)
});
