//! Pictures of environments for videos: an RGB frame and the few shapes the classic-control
//! renderings are made of, drawn as Gymnasium's pygame renderings draw them.

/// An RGB picture: `height` rows of `width` pixels, 3 bytes each, top row first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbFrame {
    /// Pixels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// `height * width * 3` bytes, row-major, red-green-blue.
    pub pixels: Vec<u8>,
}

impl RgbFrame {
    /// A frame of one colour.
    pub fn filled(width: usize, height: usize, colour: [u8; 3]) -> Self {
        RgbFrame {
            width,
            height,
            pixels: colour.repeat(width * height),
        }
    }

    /// The colour at column `x`, row `y` (row 0 at the top).
    pub fn pixel(&self, x: usize, y: usize) -> Option<[u8; 3]> {
        let i = (y.checked_mul(self.width)? + x) * 3;
        (x < self.width)
            .then(|| self.pixels.get(i..i + 3))
            .flatten()
            .map(|p| [p[0], p[1], p[2]])
    }

    /// Paints every pixel whose centre, in world coordinates with `y` pointing up (row 0 at
    /// `y = height`), satisfies `inside`.
    fn paint(&mut self, colour: [u8; 3], bounds: [f64; 4], inside: impl Fn(f64, f64) -> bool) {
        let [x0, x1, y0, y1] = bounds;
        let columns = (x0.floor().max(0.0) as usize)..(x1.ceil().max(0.0) as usize).min(self.width);
        let rows_up = (y0.floor().max(0.0) as usize)..(y1.ceil().max(0.0) as usize).min(self.height);
        for up in rows_up {
            for x in columns.clone() {
                if inside(x as f64 + 0.5, up as f64 + 0.5) {
                    let row = self.height - 1 - up;
                    let i = (row * self.width + x) * 3;
                    self.pixels[i..i + 3].copy_from_slice(&colour);
                }
            }
        }
    }

    /// Fills the convex polygon `corners` (world coordinates, `y` up, in either order).
    pub fn fill_polygon(&mut self, corners: &[(f64, f64)], colour: [u8; 3]) {
        let xs = corners.iter().map(|c| c.0);
        let ys = corners.iter().map(|c| c.1);
        let bounds = [
            xs.clone().fold(f64::INFINITY, f64::min),
            xs.fold(f64::NEG_INFINITY, f64::max),
            ys.clone().fold(f64::INFINITY, f64::min),
            ys.fold(f64::NEG_INFINITY, f64::max),
        ];
        let n = corners.len();
        self.paint(colour, bounds, |x, y| {
            // Inside a convex polygon: on the same side of every edge.
            let sides = (0..n).map(|i| {
                let ((ax, ay), (bx, by)) = (corners[i], corners[(i + 1) % n]);
                (bx - ax) * (y - ay) - (by - ay) * (x - ax)
            });
            let (mut pos, mut neg) = (false, false);
            for s in sides {
                pos |= s > 0.0;
                neg |= s < 0.0;
            }
            !(pos && neg)
        });
    }

    /// Fills the disc of `radius` around `(cx, cy)` (world coordinates, `y` up).
    pub fn fill_circle(&mut self, (cx, cy): (f64, f64), radius: f64, colour: [u8; 3]) {
        let bounds = [cx - radius, cx + radius, cy - radius, cy + radius];
        self.paint(colour, bounds, |x, y| {
            (x - cx).powi(2) + (y - cy).powi(2) <= radius * radius
        });
    }

    /// Draws the horizontal line at height `y` (world coordinates, `y` up) across the frame.
    pub fn hline(&mut self, y: f64, colour: [u8; 3]) {
        let width = self.width as f64;
        self.paint(colour, [0.0, width, y.floor(), y.floor() + 1.0], |_, _| true);
    }
}

/// CartPole in state `[x, x_dot, theta, theta_dot]` as Gymnasium draws it: 600x400, the cart
/// (50x30, black) with its top at height 100, the pole (10 wide, 2 * 0.5 m long, brown) turned
/// by `theta` from upright about the axle, the axle (blue), and the track line; 125 pixels per
/// metre (the 4.8 m between the cart's limits span the width).
pub fn cartpole_frame(state: [f64; 4], half_pole_length: f64, x_threshold: f64) -> RgbFrame {
    const WIDTH: usize = 600;
    const HEIGHT: usize = 400;
    let scale = WIDTH as f64 / (2.0 * x_threshold);
    let (pole_width, pole_length) = (10.0, scale * 2.0 * half_pole_length);
    let (cart_width, cart_height) = (50.0, 30.0);
    let axle_offset = cart_height / 4.0;
    let cart_x = state[0] * scale + WIDTH as f64 / 2.0;
    let cart_y = 100.0;
    let mut frame = RgbFrame::filled(WIDTH, HEIGHT, [255, 255, 255]);
    let (l, r, t, b) = (
        -cart_width / 2.0,
        cart_width / 2.0,
        cart_height / 2.0,
        -cart_height / 2.0,
    );
    let cart = [(l, b), (l, t), (r, t), (r, b)].map(|(x, y)| (x + cart_x, y + cart_y));
    frame.fill_polygon(&cart, [0, 0, 0]);
    let (l, r, t, b) = (
        -pole_width / 2.0,
        pole_width / 2.0,
        pole_length - pole_width / 2.0,
        -pole_width / 2.0,
    );
    let (sin, cos) = state[2].sin_cos();
    // Rotated by -theta (a positive angle leans right), then moved to the axle.
    let pole = [(l, b), (l, t), (r, t), (r, b)]
        .map(|(x, y)| (x * cos + y * sin + cart_x, -x * sin + y * cos + cart_y + axle_offset));
    frame.fill_polygon(&pole, [202, 152, 101]);
    frame.fill_circle(
        (cart_x, cart_y + axle_offset),
        (pole_width / 2.0).floor(),
        [129, 132, 203],
    );
    frame.hline(cart_y, [0, 0, 0]);
    frame
}
