# SPDX-License-Identifier: GPL-2.0-or-later
# Read latency distributions of bench/latency.sh: one panel per disk, one
# cumulative curve per scheduler, latency on a log scale.
#	gnuplot -e "dir='RESULTS_DIR'" bench/latency.gnuplot
set terminal pngcairo size 1100,450 noenhanced
set output dir.'/latency.png'
set multiplot layout 1,2 title "4 KiB random reads (20/s) under two sequential writers: CDF of completion latency"
set logscale x
set xlabel 'read latency (ms)'
set ylabel 'fraction of reads'
set yrange [0:1]
set key below horizontal
set grid
set title 'real backing disk (no model)'
plot dir.'/cdf-real-noop.dat' using 1:2 with lines lw 2 title 'noop', \
     dir.'/cdf-real-deadline.dat' using 1:2 with lines lw 2 title 'deadline', \
     dir.'/cdf-real-deadline-fb1.dat' using 1:2 with lines lw 2 dt 2 title 'deadline, fifo_batch=1'
set title 'hdd model (seek 8 ms, 7200 rpm, 150 MB/s)'
plot dir.'/cdf-hdd-noop.dat' using 1:2 with lines lw 2 title 'noop', \
     dir.'/cdf-hdd-deadline.dat' using 1:2 with lines lw 2 title 'deadline', \
     dir.'/cdf-hdd-deadline-fb1.dat' using 1:2 with lines lw 2 dt 2 title 'deadline, fifo_batch=1'
unset multiplot
