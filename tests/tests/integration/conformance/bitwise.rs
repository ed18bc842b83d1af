//! `BitwiseOps`: and, or, xor with broadcasting, shifts both ways, and errors for other dtypes.

use super::prelude::*;

// 12 = 0b1100 and 10 = 0b1010; -1 is all ones in two's complement, so -1 & 3 = 3,
// -1 | 3 = -1 and -1 ^ 3 = -4; 5 against 0 keeps 5 or gives 0. Worked by hand.
case!(bit_ops_as_parameters, vec![vec![8.0, 3.0, 0.0], vec![14.0, -1.0, 5.0], vec![6.0, -4.0, 5.0]], <B> {
    let a = i64s::<B>(&[3], &[12, -1, 5])?;
    let b = i64s::<B>(&[3], &[10, 3, 0])?;
    let outs = [BitOp::And, BitOp::Or, BitOp::Xor]
        .iter()
        .map(|&op| B::bitwise(op, &a, &b))
        .collect::<Result<Vec<_>>>()?;
    host::<B>(&outs)
});

// [[1, 2], [3, 4]] ^ 1 flips the lowest bit: [[0, 3], [2, 5]]; & [1, 2] by rows: [[1, 2], [1, 0]].
case!(bit_ops_broadcast, vec![vec![0.0, 3.0, 2.0, 5.0], vec![1.0, 2.0, 1.0, 0.0]], <B> {
    let a = i64s::<B>(&[2, 2], &[1, 2, 3, 4])?;
    let xor = shaped::<B>(B::bit_xor(&a, &i64s::<B>(&[], &[1])?)?, &[2, 2])?;
    let and = shaped::<B>(B::bit_and(&a, &i64s::<B>(&[2], &[1, 2])?)?, &[2, 2])?;
    host::<B>(&[xor, and])
});

// Left by 4 multiplies by 16; right by 2 divides by 4 rounding toward minus infinity
// (-8 >> 2 = -2, -7 >> 2 = -2); 1 << 63 is the sign bit alone, -2^63. By hand.
case!(shifts_both_ways, vec![
    vec![16.0, 48.0, -128.0],
    vec![4.0, 1.0, -2.0, -2.0],
    vec![-(2f64.powi(63))],
], <B> {
    let left = B::shift_left(&i64s::<B>(&[3], &[1, 3, -8])?, 4)?;
    let right = B::shift_right(&i64s::<B>(&[4], &[16, 7, -8, -7])?, 2)?;
    let sign = B::shift_left(&i64s::<B>(&[1], &[1])?, 63)?;
    host::<B>(&[left, right, sign])
});

#[test]
fn bit_ops_on_floats_or_wide_shifts_are_errors_naming_the_op() {
    fn run<B: Backend>() {
        let x = f32s::<B>(&[2], &[1.0, 2.0]).expect("x");
        let i = i64s::<B>(&[2], &[1, 2]).expect("i");
        let message = B::bit_xor(&x, &i).expect_err("floats xored").to_string();
        assert!(
            message.contains("bit_xor") && message.contains("I64"),
            "{}: {message}",
            B::NAME
        );
        let message = B::shift_left(&i, 64).expect_err("a 64-bit shift").to_string();
        assert!(
            message.contains("shift_left") && message.contains("64"),
            "{}: {message}",
            B::NAME
        );
    }
    run::<Candle>();
    run::<Tch>();
}
