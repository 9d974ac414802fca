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
8 27289477.90211787
64 23645230.25875534
512 11510332.276344633
4096 4261591.388942904
32768 1321600.9376959323
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
8 4.375475623653337
64 0.5611555509366667
512 0.08853605644583332
4096 0.06200577108000002
32768 0.11270224142583331
EOD
$time_data_parallel << EOD
8 4.376483170453337
64 0.5684573707766667
EOD
$time_batch_spatial << EOD
8 4.376483170453337
64 0.5684573707766667
512 0.11301706113249997
4096 0.194019664615
32768 0.6498246709583334
EOD
$time_channel_filter << EOD
8 5.074462054373335
64 0.9221686445199994
512 0.20319377454249987
4096 0.07216924514916666
32768 0.10779283026833333
EOD
plot $time_planner using 1:2 with linespoints linewidth 2 title 'planner', \
     $time_data_parallel using 1:2 with linespoints linewidth 5 pointsize 1.6 title 'data parallel', \
     $time_batch_spatial using 1:2 with linespoints linewidth 2 title 'batch x spatial', \
     $time_channel_filter using 1:2 with linespoints linewidth 2 title 'channel / filter'
unset output
