// Package patchid computes the patch-id git patch-id --stable prints for a
// diff: what identifies a change whatever its line numbers and whitespace,
// used to match review replies to patches (as b4 trailers -u does) and to
// name a stacked series' prerequisites (prerequisite-patch-id, as git
// format-patch --base writes them).
package patchid
