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
512 15458875
4096 5558848
32768 1689972
EOD
$words_data_parallel << EOD
8 44630096
64 50208858
EOD
$words_batch_spatial << EOD
8 44630096
64 50208858
512 47258411
4096 47177262
32768 4439902
EOD
$words_channel_filter << EOD
8 2192135680
64 1046055680
512 390594235
4096 134966846
32768 28032354
EOD
$words_lower_bound << EOD
8 27289477.90211787
64 23645230.25875534
512 11510332.276344633
4096 4261428.810124955
32768 1319393.2271049065
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
8 4.33347910738667
64 0.5540597676533332
512 0.0769457778666667
4096 0.01204860154666667
32768 0.0040304205866666665
EOD
$time_data_parallel << EOD
8 4.33448665418667
64 0.5604878374933333
EOD
$time_batch_spatial << EOD
8 4.33448665418667
64 0.5604878374933333
512 0.09036297005333335
4096 0.02679713570666667
32768 0.005028381706666666
EOD
$time_channel_filter << EOD
8 5.021706441066668
64 0.9071441654222216
512 0.2007699022133333
4096 0.061338474053333314
32768 0.026257078506666663
EOD
plot $time_planner using 1:2 with linespoints linewidth 2 title 'planner', \
     $time_data_parallel using 1:2 with linespoints linewidth 5 pointsize 1.6 title 'data parallel', \
     $time_batch_spatial using 1:2 with linespoints linewidth 2 title 'batch x spatial', \
     $time_channel_filter using 1:2 with linespoints linewidth 2 title 'channel / filter'
unset output
