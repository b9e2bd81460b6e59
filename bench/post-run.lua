-- wrk script: POST a simulation run (body {}) with the API token (env OLV_TOKEN)
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("OLV_TOKEN")
