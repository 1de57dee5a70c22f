#!/bin/sh
# A stand-in for qemu-system-x86_64 used by the tests. It appends its
# arguments to $FAKE_QEMU_LOG (one line per invocation), answers --version
# with $FAKE_QEMU_VERSION, and behaves under -accel kvm as $FAKE_QEMU_KVM
# says, reproducing what real hosts do:
#   works      KVM boots like TCG (the default)
#   hang       the firmware probe passes, the guest hangs after the firmware
#   abort      QEMU aborts (SIGABRT) before printing anything, saying
#              "failed to set MSR", but only with -cpu host, as QEMU 7.2
#              does on hosts without VMX/SVM where the default model boots
#   exit       the firmware probe passes, QEMU exits 1 before the guest prints
#   probehang  the firmware probe itself never finishes
# The run (TCG, or KVM that works) then prints a console and ends as
# $FAKE_QEMU says: ok (default), hang, fail (an error after the boot), or
# dead (exit 1 before printing anything).
ulimit -c 0
if [ -n "$FAKE_QEMU_LOG" ]; then echo "$*" >>"$FAKE_QEMU_LOG"; fi
if [ "$1" = --version ]; then
	echo "QEMU emulator version ${FAKE_QEMU_VERSION:-7.2.22} (fake)"
	exit 0
fi
case " $* " in
*" -accel kvm "*)
	case "${FAKE_QEMU_KVM:-works}" in
	abort)
		case " $* " in
		*" -cpu host "*)
			echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
			echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
			kill -ABRT $$
			;;
		esac
		;;
	probehang)
		case " $* " in *" -bios "*) exec sleep 60 ;; esac
		;;
	hang)
		case " $* " in *" -bios "*) ;; *) echo "SeaBIOS (fake)"; exec sleep 60 ;; esac
		;;
	exit)
		case " $* " in *" -bios "*) ;; *) echo "qemu-system-x86_64: fake exit before the guest printed" >&2; exit 1 ;; esac
		;;
	esac
	;;
esac
case " $* " in
*" -bios "*) exit 85 ;; # accelerator probe: the firmware "wrote" 0x2a to isa-debug-exit
esac
if [ "$FAKE_QEMU" = dead ]; then exit 1; fi
echo "Linux version 6.12.0 (fake)"
echo "KTAP version 1"
case "$FAKE_QEMU" in
hang) exec sleep 60 ;;
fail) echo "qemu-system-x86_64: -kernel bad: No such file" >&2; exit 1 ;;
*) echo "ok 1 fake"; exit 0 ;;
esac
