# bench/chart.gp - records/s by reader, from bench/throughput.sh's summary.
#
#   gnuplot -e "results='build/bench-results'" bench/chart.gp
#
# Reads RESULTS/throughput.csv (tool,label,median,min,max,...,short) and writes
# RESULTS/throughput.png: one bar per reader at its median, whiskers from
# the slowest to the fastest run.
if (!exists("results")) results = "build/bench-results"

set terminal pngcairo size 1300,420 font "sans,9" noenhanced
set output results."/throughput.png"
set datafile separator ","
set key off
set title "Reading a topic to its end, read_committed (records/s, median; whiskers: min-max)"
set style fill solid 0.6 border -1
set grid ytics
set yrange [0:*]
set format y "%.1s%c"
set ylabel "records/s"
set xtics scale 0 font ",8"
set bmargin 4
# Column 9 is a short label; "|" breaks the line.
label(s) = (strstrt(s, "|") > 0) ? s[1:strstrt(s, "|") - 1]."\n".s[strstrt(s, "|") + 1:] : s
set offsets 0.5, 0.5, 0, 0
plot results."/throughput.csv" every ::1 using 0:3:4:5:(0.6):xticlabels(label(strcol(9))) \
        with boxerrorbars lc rgb "#4a7ab5", \
     "" every ::1 using 0:5:(sprintf("%.2fM", $3 / 1e6)) with labels offset 0,0.7
