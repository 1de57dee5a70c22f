// Package cpio writes initramfs archives in the "newc" (SVR4, no CRC)
// format that the Linux kernel unpacks at boot.
//
// Archives are reproducible: every record has a fixed inode number
// (assigned in order), mtime 0, uid 0 and gid 0, so the same files give
// the same bytes. Directories that a file needs are emitted before it, and
// the trailer record is written by Close.
package cpio
