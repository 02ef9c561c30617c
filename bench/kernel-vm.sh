#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/kernel-vm.sh: bench/kernel.sh on a kernel that has every scheduler.
#
#	bench/kernel-vm.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# A kernel built without bfq (or without modules) cannot be the reference
# for fuse-iosched's bfq.  This boots Debian's own kernel (bookworm's
# linux-image-amd64: bfq, mq-deadline and kyber as modules) under qemu and
# runs bench/kernel.sh inside it, with this build tree: the kernel's
# schedulers and fuse-iosched's then run on the same kernel, the same
# virtual disk and the same virtual CPUs, alternating as on the host.
#
# The guest's disk is a sparse image in DIR, opened by qemu with
# cache=none, so the guest's I/O reaches the host's disk without the host's
# page cache; the guest's own scheduler on that disk is "none", so the
# loop device's scheduler (or fuse-iosched's) is the only one that orders
# requests.  Without KVM the guest's CPUs are emulated and some ten times
# slower than the host's: compare ratios (shares, p99 against p99), not
# MiB/s, with the host's run.
#
# The guest's root file system is made once with debootstrap from the
# Debian archive and kept in DIR/fuse-iosched-vm-root (about 700 MB).
# RESULTS_DIR receives bench/kernel.sh's results and the guest's console
# (console.log).
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=kernel-vm RUNTIME=10
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
for c in debootstrap qemu-system-x86_64 mkfs.ext4 debugfs; do
	command -v $c >/dev/null || die "needs $c (Debian: debootstrap qemu-system-x86 e2fsprogs)"
done

ROOT=$WORKDIR/fuse-iosched-vm-root
TREE=$(cd "$HERE/.." && pwd)
PACKAGES=linux-image-amd64,initramfs-tools,kmod,udev,util-linux,mount,e2fsprogs,procps,fio,fuse3,libfuse3-3,libevent-2.1-7,libevent-pthreads-2.1-7,libconfuse2,python3

if [ ! -e "$ROOT/.complete" ]; then
	echo "making the guest's root file system in $ROOT (once)"
	rm -rf "$ROOT"
	debootstrap --variant=minbase --include=$PACKAGES bookworm "$ROOT" \
		http://deb.debian.org/debian >"$W/debootstrap.log" 2>&1 ||
		die "debootstrap failed: $(tail -n 5 "$W/debootstrap.log")"
	touch "$ROOT/.complete"
fi

# The guest runs this as its init: the initramfs has mounted /proc, /sys
# and /dev; the rest is ours.
cat >"$ROOT/kernel-vm-init" <<EOF
#!/bin/bash
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -o remount,rw /
for m in fuse loop bfq kyber-iosched mq-deadline; do
	modprobe \$m 2>/dev/null
done
echo none >/sys/block/vda/queue/scheduler
cd /fuse-iosched
bench/kernel.sh -t $RUNTIME -r $ROUNDS -d /var/tmp /results
echo "kernel.sh exit \$?" >/results/exit
sync
# Power off; init must not exit meanwhile (the kernel would panic).
echo o >/proc/sysrq-trigger
sleep 600
EOF
chmod +x "$ROOT/kernel-vm-init"
rm -rf "$ROOT/fuse-iosched" "$ROOT/results"
mkdir -p "$ROOT/fuse-iosched" "$ROOT/results"
tar -C "$TREE" --exclude=.git -cf - bench src schedulers |
	tar -C "$ROOT/fuse-iosched" -xf -

# bench/kernel.sh makes a 4 GiB image inside the guest.
mkfs.ext4 -q -F -d "$ROOT" "$W/disk.img" 10G
kernels=("$ROOT"/boot/vmlinuz-*) initrds=("$ROOT"/boot/initrd.img-*)
kernel=${kernels[-1]} initrd=${initrds[-1]}
accel=tcg,thread=multi
[ -w /dev/kvm ] && grep -qw -e vmx -e svm /proc/cpuinfo && accel=kvm
echo "booting $(basename "$kernel") under qemu ($accel); the console goes to $RESULTS/console.log"
timeout $((3600 + 30 * RUNTIME * ROUNDS)) qemu-system-x86_64 \
	-accel "$accel" -m 4096 -smp 2 -nographic -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "root=/dev/vda rw console=ttyS0 init=/kernel-vm-init panic=-1" \
	-drive "file=$W/disk.img,format=raw,if=virtio,cache=none,aio=native" \
	>"$RESULTS/console.log" 2>&1 || die "qemu failed or timed out: see $RESULTS/console.log"

debugfs -R "rdump /results $W" "$W/disk.img" >/dev/null 2>&1 ||
	die "cannot read the results from the guest's disk"
cp -r "$W/results/." "$RESULTS/"
[ -s "$RESULTS/summary.txt" ] ||
	die "bench/kernel.sh did not finish in the guest: see $RESULTS/console.log"
cat "$RESULTS/exit"
cat "$RESULTS/summary.txt"
