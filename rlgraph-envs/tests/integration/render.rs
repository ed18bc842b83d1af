//! CartPole's rendering against Gymnasium's drawing rules worked by hand: 600x400, 125
//! pixels per metre, the cart's top at height 100, the pole 125 pixels from 2.5 below its
//! axle (7.5 above the cart's top), turned right by a positive angle.

use rlgraph_envs::{CartPole, Env, RgbFrame};

const BLACK: [u8; 3] = [0, 0, 0];
const WHITE: [u8; 3] = [255, 255, 255];
const POLE: [u8; 3] = [202, 152, 101];
const AXLE: [u8; 3] = [129, 132, 203];

fn frame(state: [f64; 4]) -> RgbFrame {
    let mut env = CartPole::new(0);
    env.reset(Some(0)).unwrap();
    env.set_state(&state).unwrap();
    env.render().unwrap()
}

/// The colour at `x` pixels from the left and `up` pixels from the bottom.
fn at(f: &RgbFrame, x: usize, up: usize) -> [u8; 3] {
    f.pixel(x, f.height - 1 - up).unwrap()
}

#[test]
fn cartpole_draws_cart_pole_axle_and_track_where_gymnasium_does() {
    let f = frame([0.0, 0.0, 0.0, 0.0]);
    assert_eq!((f.width, f.height, f.pixels.len()), (600, 400, 600 * 400 * 3));
    // The cart spans x 275..325 and heights 85..115.
    assert_eq!(at(&f, 276, 90), BLACK);
    assert_eq!(at(&f, 323, 112), BLACK);
    assert_eq!(at(&f, 270, 90), WHITE);
    assert_eq!(at(&f, 300, 80), WHITE);
    // The track line at height 100, across the whole width.
    assert_eq!(at(&f, 5, 100), BLACK);
    assert_eq!(at(&f, 595, 100), BLACK);
    // The axle: a disc of radius 5 around (300, 107.5).
    assert_eq!(at(&f, 300, 107), AXLE);
    // The upright pole: x 295..305, heights 102.5..227.5, above the axle.
    assert_eq!(at(&f, 300, 200), POLE);
    assert_eq!(at(&f, 296, 226), POLE);
    assert_eq!(at(&f, 300, 229), WHITE);
    assert_eq!(at(&f, 308, 200), WHITE);
    // Turned by 0.2 rad: 100 pixels up the pole's centre line lies right of the axle, at
    // (300 + 100 sin 0.2, 107.5 + 100 cos 0.2) = (319.9, 205.5); its mirror image is empty.
    let f = frame([0.0, 0.0, 0.2, 0.0]);
    assert_eq!(at(&f, 319, 205), POLE);
    assert_eq!(at(&f, 280, 205), WHITE);
    // The cart 1 m right: centred on x = 425.
    let f = frame([1.0, 0.0, 0.0, 0.0]);
    assert_eq!(at(&f, 425, 90), BLACK);
    assert_eq!(at(&f, 300, 90), WHITE);
    assert_eq!(at(&f, 425, 200), POLE);
}

#[test]
fn environments_that_cannot_draw_say_so() {
    let mut env = rlgraph_envs::make("Acrobot-v1", 0).unwrap();
    env.reset(Some(0)).unwrap();
    let err = env.render().unwrap_err().to_string();
    assert!(
        err.contains("Acrobot-v1") && err.contains("cannot render") && err.contains("CartPole-v1"),
        "{err}"
    );
}
