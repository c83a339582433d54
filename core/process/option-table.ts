/*
 * What ffmpeg (5.x-7.x) does with an option's value, as far as files are concerned. An option
 * not listed as a flag takes a value (every codec, format and protocol AVOption does), so a
 * missing flag here could hide a positional output behind it: values that look like a path
 * outside the root are checked anyway (option-scan.ts).
 */

/** ffmpeg's options without a value (OPT_BOOL and the like); `-noX` is the flag X negated. */
export const FLAGS = new Set([
  'y', 'n', 'ignore_unknown', 'copy_unknown', 'recast_media', 'benchmark', 'benchmark_all', 'stdin', 'dump',
  'hex', 're', 'copyts', 'start_at_zero', 'shortest', 'bitexact', 'copyinkf', 'copypriorss', 'debug_ts',
  'xerror', 'accurate_seek', 'autorotate', 'autoscale', 'find_stream_info', 'stats', 'fix_sub_duration',
  'vn', 'an', 'sn', 'dn', 'qphist', 'psnr', 'force_fps', 'auto_conversion_filters', 'intra', 'hide_banner',
  'print_graphs', 'report', 'vstats', 'L', 'version', 'buildconf', 'formats', 'muxers', 'demuxers',
  'devices', 'codecs', 'decoders', 'encoders', 'bsfs', 'protocols', 'filters', 'pix_fmts', 'layouts',
  'ch_layouts', 'sample_fmts', 'dispositions', 'colors', 'hwaccels',
]);

/** Flags refused outright: they write a file named by ffmpeg into its working directory. */
export const REFUSED_FLAGS = new Map([
  ['report', '-report writes a log file outside the disk folder'],
  ['vstats', '-vstats writes a statistics file outside the disk folder'],
]);

/** Options whose value is a file ffmpeg writes (relative to its working directory) or an output URL. */
export const FILE_OPTIONS = new Set([
  'hls_segment_filename', 'hls_subtitle_path', 'segment_list', 'passlogfile', 'vstats_file', 'sdp_file',
  'progress', 'dump_attachment', 'stats_enc_pre', 'stats_enc_post', 'stats_mux_pre',
]);

/** Options whose value is a name ffmpeg joins to the output's folder. */
export const RELATIVE_OPTIONS = new Set(['master_pl_name', 'hls_fmp4_init_filename', 'init_seg_name', 'media_seg_name']);

/** Filter graphs: checked for filters that write or load files (filter-graph.ts). */
export const FILTER_OPTIONS = new Set(['vf', 'af', 'filter', 'lavfi', 'filter_complex']);

/** Options whose value ffmpeg reads (an input, a preset, an attachment): reading is allowed (reference 8.4). */
export const READ_OPTIONS = new Set(['i', 'attach', 'fpre', 'pre', 'vpre', 'apre', 'spre', 'hls_key_info_file', 'key_info_file']);

/** Options refused whatever their value: they read option text or filter graphs from files we cannot check. */
export const REFUSED_OPTIONS = new Map([
  ['filter_script', 'filter graphs from files are not allowed'],
  ['filter_complex_script', 'filter graphs from files are not allowed'],
]);

/** Options whose value is text that may hold '/' without naming a file. */
export const TEXT_OPTIONS = new Set([
  'metadata', 'hls_base_url', 'headers', 'user_agent', 'referer', 'method', 'map', 'map_metadata',
  'map_chapters', 'segment_list_entry_prefix', 'base_url', 'content_type', 'time_base', 'r', 'aspect',
  'c', 'codec', 'vcodec', 'acodec', 'f', 'pix_fmt', 'tag',
  'hls_flags', 'var_stream_map', 'cc_stream_map', 'adaptation_sets', 'rtmp_app', 'rtmp_playpath',
  'rtmp_tcurl', 'rtmp_pageurl', 'rtmp_swfurl', 'rtmp_flashver', 'rtsp_transport', 'streamid', 'passphrase',
]);
