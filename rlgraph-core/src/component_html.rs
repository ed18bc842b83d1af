//! The component view as one self-contained HTML page: the picture as SVG laid out in Rust
//! (`component_layout`), with a script that collapses and expands scopes on a click, shows
//! a box's API spaces and devices on hover, and finds components by name. The page loads
//! nothing from anywhere: its style, script and data are inline.

use std::fmt::Write;

use crate::component_layout::{Layout, Rect, HEADER, LINE_HEIGHT};
use crate::component_view::ComponentView;

const STYLE: &str = include_str!("component_page.css");
const SCRIPT: &str = include_str!("component_page.js");

/// Text made safe inside XML/HTML elements and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn rect_attrs(r: &Rect) -> String {
    format!(
        "x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"",
        r.x, r.y, r.w, r.h
    )
}

impl ComponentView {
    /// The picture as a self-contained HTML page titled `title`: click a scope's title bar
    /// (or its own box) to collapse or expand it, hover a box for its API methods' input
    /// and output spaces and its devices, type in the search box to find components.
    pub fn to_html(&self, title: &str) -> String {
        let layout = Layout::new(self, &|p| self.label_lines(p));
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            "<svg id=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\">",
            layout.width, layout.height
        );
        svg.push_str("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>\n");
        svg.push_str("<g id=\"clusters\">\n");
        // A scope's path sorts before every path under it, so outer scopes are drawn first.
        for (path, r) in &layout.clusters {
            let _ = writeln!(
                svg,
                "<g class=\"cluster\" data-path=\"{p}\"><rect class=\"frame\" rx=\"8\" {a}/><text class=\"title\" x=\"{x:.1}\" y=\"{y:.1}\">{p}</text></g>",
                p = escape(path),
                a = rect_attrs(r),
                x = r.x + 8.0,
                y = r.y + HEADER - 7.0,
            );
        }
        svg.push_str("</g>\n<g id=\"edges\"></g>\n<g id=\"nodes\">\n");
        for (path, r) in &layout.boxes {
            let _ = write!(
                svg,
                "<g class=\"node\" data-path=\"{}\"><rect rx=\"6\" {} fill=\"{}\"/><text>",
                escape(path),
                rect_attrs(r),
                self.fill(path)
            );
            for (i, line) in self.label_lines(path).iter().enumerate() {
                let _ = write!(
                    svg,
                    "<tspan x=\"{:.1}\" y=\"{:.1}\">{}</tspan>",
                    r.x + r.w / 2.0,
                    r.y + 5.0 + LINE_HEIGHT * (i as f64 + 0.8),
                    escape(line)
                );
            }
            let _ = writeln!(
                svg,
                "</text><text class=\"badge\" x=\"{:.1}\" y=\"{:.1}\"></text></g>",
                r.x + r.w - 4.0,
                r.y - 3.0
            );
        }
        svg.push_str("</g>\n</svg>");
        // `</` would end the script element early; JSON allows the escaped slash.
        let data = self.to_json().to_string().replace("</", "<\\/");
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
             <header><strong>{title}</strong> <input id=\"search\" type=\"search\" placeholder=\"find a component\" autocomplete=\"off\"> <span id=\"found\"></span> \
             <button id=\"collapse-all\">collapse all</button> <button id=\"expand-all\">expand all</button> <span id=\"shown\"></span></header>\n\
             <div id=\"canvas\">\n{svg}\n</div>\n<div id=\"tip\" hidden></div>\n<script>const VIEW = {data};</script>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n",
            title = escape(title),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_covers_markup_characters() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }
}
