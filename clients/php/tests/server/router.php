<?php

// Router of the scripted server used by ClientTest (php -S): answers each request with the
// next reply of $SCRIPT_DIR/replies.json and appends the request to $SCRIPT_DIR/seen.jsonl.
$dir = getenv('SCRIPT_DIR');
$replies = json_decode((string) @file_get_contents("$dir/replies.json"), true) ?: [];
$reply = array_shift($replies) ?? ['status' => 200, 'body' => '{"ok":true}'];
file_put_contents("$dir/replies.json", json_encode($replies));
$headers = [];
foreach ($_SERVER as $k => $v) {
    if (str_starts_with($k, 'HTTP_')) {
        $headers[strtolower(str_replace('_', '-', substr($k, 5)))] = $v;
    }
}
if (isset($_SERVER['CONTENT_TYPE'])) {
    $headers['content-type'] = $_SERVER['CONTENT_TYPE'];
}
file_put_contents("$dir/seen.jsonl", json_encode([
    'method' => $_SERVER['REQUEST_METHOD'],
    'uri' => $_SERVER['REQUEST_URI'],
    'headers' => $headers,
    'body' => file_get_contents('php://input'),
]) . "\n", FILE_APPEND);
if (isset($reply['sleep'])) {
    usleep((int) ($reply['sleep'] * 1_000_000));
}
http_response_code($reply['status']);
foreach ($reply['headers'] ?? [] as $name => $value) {
    header("$name: $value");
}
echo $reply['body'];
