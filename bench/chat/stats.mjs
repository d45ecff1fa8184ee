// Small statistics for bench/chat: medians and ratios of samples measured in the same run.
const sorted = (values) => [...values].sort((a, b) => a - b);
export const median = (values) => sorted(values)[Math.floor(values.length / 2)];
export const p90 = (values) => sorted(values)[Math.min(values.length - 1, Math.floor(values.length * 0.9))];
export const ms = (value) => `${value.toFixed(1)} ms`;
export const us = (value) => `${(value * 1000).toFixed(0)} µs`;
export const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
export const now = () => performance.timeOrigin + performance.now();
export const sleep = (delay) => new Promise((resolve) => setTimeout(resolve, delay));
export const rate = (value) => (value < 10 ? value.toFixed(1) : value.toFixed(0)).padStart(6);
