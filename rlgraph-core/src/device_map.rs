//! Device maps: which device each component's variables and kernels live on.

use crate::backend::Device;

/// Assigns devices by scope: the longest matching rule, then the component's own setting
/// (inherited by its sub-components), then the default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceMap {
    /// The device of components that nothing else places.
    pub default: Device,
    /// `(scope pattern, device)` rules; a pattern matches a scope path and everything below it,
    /// and `*` within a segment matches any characters.
    pub rules: Vec<(String, Device)>,
}

impl DeviceMap {
    /// A map that places everything on `default`.
    pub fn new(default: Device) -> Self {
        DeviceMap { default, rules: vec![] }
    }

    /// The same map with one more rule.
    pub fn assign(mut self, pattern: impl Into<String>, device: Device) -> Self {
        self.rules.push((pattern.into(), device));
        self
    }

    /// The device for the component at `path`, whose own (or inherited) setting is `own`.
    pub fn resolve(&self, path: &str, own: Option<Device>) -> Device {
        let segments: Vec<&str> = path.split('/').collect();
        self.rules
            .iter()
            .filter_map(|(pattern, device)| {
                let pat: Vec<&str> = pattern.trim_matches('/').split('/').collect();
                let matches = pat.len() <= segments.len() && pat.iter().zip(&segments).all(|(p, s)| glob(p, s));
                matches.then_some((pat.len(), *device))
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, d)| d)
            .or(own)
            .unwrap_or(self.default)
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| glob(rest, &tail[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_rule_then_own_setting_then_default() {
        let map = DeviceMap::new(Device::Cpu)
            .assign("agent/policy", Device::Cuda(0))
            .assign("agent/policy/net*", Device::Cuda(1));
        assert_eq!(map.resolve("agent/policy", None), Device::Cuda(0));
        assert_eq!(map.resolve("agent/policy/head", None), Device::Cuda(0));
        assert_eq!(map.resolve("agent/policy/network/dense", None), Device::Cuda(1));
        assert_eq!(map.resolve("agent/memory", Some(Device::Cuda(3))), Device::Cuda(3));
        assert_eq!(map.resolve("agent/memory", None), Device::Cpu);
        assert_eq!(map.resolve("agent/policyx", None), Device::Cpu);
    }
}
