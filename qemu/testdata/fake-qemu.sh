#!/bin/sh
# A stand-in for qemu-system-x86_64 used by the tests: prints a console,
# then behaves as asked by the FAKE_QEMU environment variable.
case " $* " in
*" -bios "*) exit 85 ;; # accelerator probe: the firmware "wrote" 0x2a to isa-debug-exit
esac
if [ "$FAKE_QEMU" = kvmhang ]; then
	case " $* " in
	*" -accel kvm "*) echo "SeaBIOS"; exec sleep 60 ;;
	esac
fi
echo "Linux version 6.12.0 (fake)"
echo "KTAP version 1"
case "$FAKE_QEMU" in
hang) exec sleep 60 ;;
fail) echo "qemu-system-x86_64: -kernel bad: No such file" >&2; exit 1 ;;
*) echo "ok 1 fake"; exit 0 ;;
esac
