# SPDX-License-Identifier: GPL-2.0-or-later
# Throughput over time around scheduler switches (bench/switch.sh, round
# 1): the load's total bandwidth per 100 ms, and each switch's duration at
# the time it started.
#	gnuplot -e "dir='RESULTS_DIR'" bench/switch.gnuplot
set terminal pngcairo size 1100,600 noenhanced
set output dir.'/switch.png'
set multiplot layout 2,1 title "fio verify load while .control/scheduler is switched every 25 ms in even seconds"
set grid
set xlabel 'time since fio started (s)'
set ylabel 'MiB/s (read + write, 100 ms)'
set key top right
plot dir.'/tp-r1.dat' using 1:2 with lines lw 1.5 title 'throughput', \
     dir.'/sw-r1.dat' using 1:(0) with points pt 2 ps 0.6 title 'switch'
set xrange [GPVAL_X_MIN:GPVAL_X_MAX]
set ylabel 'switch time (ms)'
set logscale y
plot dir.'/sw-r1.dat' using 1:2 with points pt 7 ps 0.5 title 'open+write+close of .control/scheduler'
unset multiplot
