# convgrid simulate: words.svg and time.svg from the figures of simulate.csv (held below).
# Run in this folder: gnuplot simulate.gp
set terminal svg size 960,600 dynamic enhanced font 'sans,13' background rgb 'white'
set logscale xy
set xrange [5.333333333333333:49152]
set xtics (8, 64, 512, 4096, 32768)
set format y '10^{%L}'
set grid xtics ytics mytics
set key outside right top
set xlabel 'ranks P'
set output 'words.svg'
set title 'resnet50, batch 256, passes train: words received per rank' noenhanced
set ylabel 'words per rank (busiest rank, per step)'
$words_planner << EOD
8 41483856
64 32387546
512 15462235
4096 5560693
32768 1695513
EOD
$words_data_parallel << EOD
8 44630096
64 50208858
EOD
$words_batch_spatial << EOD
8 44630096
64 50208858
512 47261771
4096 47179107
32768 4440697
EOD
$words_channel_filter << EOD
8 2225853952
64 1070942976
512 390597595
4096 134968691
32768 28037895
EOD
$words_lower_bound << EOD
8 6680455.730307367
64 15053860.267292846
512 9805861.793926535
4096 4001279.4155228925
32768 1309588.8088097882
EOD
plot $words_planner using 1:2 with linespoints linewidth 2 title 'planner', \
     $words_data_parallel using 1:2 with linespoints linewidth 5 pointsize 1.6 title 'data parallel', \
     $words_batch_spatial using 1:2 with linespoints linewidth 2 title 'batch x spatial', \
     $words_channel_filter using 1:2 with linespoints linewidth 2 title 'channel / filter', \
     $words_lower_bound using 1:2 with lines dashtype 2 linewidth 2 linecolor 'black' title 'lower bound'
set output 'time.svg'
set title 'resnet50, batch 256, passes train: modelled time per training step' noenhanced
set ylabel 'seconds'
$time_planner << EOD
8 4.375879873653335
64 0.5632280821866666
512 0.09871498613333339
4096 0.10363458975999998
32768 0.20449146869333332
EOD
$time_data_parallel << EOD
8 4.376888170453335
64 0.5704714020266666
EOD
$time_batch_spatial << EOD
8 4.376888170453335
64 0.5704714020266666
512 0.13276092831999994
4096 0.3518584302400002
32768 1.2482040195733333
EOD
$time_channel_filter << EOD
8 5.074854304373334
64 0.8958098843200006
512 0.20223607440000013
4096 0.07795471738666669
32768 0.17253203093333336
EOD
plot $time_planner using 1:2 with linespoints linewidth 2 title 'planner', \
     $time_data_parallel using 1:2 with linespoints linewidth 5 pointsize 1.6 title 'data parallel', \
     $time_batch_spatial using 1:2 with linespoints linewidth 2 title 'batch x spatial', \
     $time_channel_filter using 1:2 with linespoints linewidth 2 title 'channel / filter'
unset output
